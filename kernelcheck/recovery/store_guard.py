"""Write-address checking on a real GPU: a PTX rewrite that traps stores outside given ranges.

On the emulator the write guard lives in the memory model
(:meth:`kernelcheck.emu.memory.DeviceMemory.set_write_guard`). A GPU has no such hook, so
:func:`rewrite_store_guard` inserts the same check in the PTX of one kernel: before every
global (or generic) ``st``, ``atom`` and ``red``, the thread walks a table of sorted,
half-open byte ranges and executes ``trap`` unless the whole access lies inside one of them.
The kernel gains two parameters, after its own:

* ``<kernel>_kcwg_table`` (``.u64``): device address of the table, ``count`` pairs of
  little-endian ``u64`` ``(lo, hi)`` (:func:`guard_table`);
* ``<kernel>_kcwg_count`` (``.u32``): the number of pairs.

The trap stops the store before it lands; the launch then fails with
``CUDA_ERROR_LAUNCH_FAILED`` (``illegal instruction`` on recent drivers), which the recovery
engine sees as a device error and replays from the saved bytes, as it does on the emulator.

Limits, stated so that no one mistakes the check for more than it is:

* the walk is linear in the number of ranges (a binary search would suit footprints of
  many strided pieces);
* a generic store is checked as if it were global, so a kernel that stores to shared or
  local memory through generic addresses would trap in a correct run (PTX ``isspacep``
  would tell them apart; the emulator does not model it);
* stores inside called device functions are not rewritten: a kernel that calls a function
  with global or generic stores is refused (:class:`~kernelcheck.errors.UnsupportedFeature`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

import numpy as np

from kernelcheck.errors import UnsupportedFeature
from kernelcheck.ir.nodes import (
    Address,
    Function,
    Guard,
    Immediate,
    Instruction,
    Label,
    Module,
    Param,
    Register,
    RegisterDecl,
    Symbol,
    type_size,
)
from kernelcheck.ptx.printer import print_ptx

__all__ = ["rewrite_store_guard", "guard_table", "guarded_stores"]

_A, _E, _T, _LO, _HI = "%kcwg_a", "%kcwg_e", "%kcwg_t", "%kcwg_lo", "%kcwg_hi"
_N, _P, _Q = "%kcwg_n", "%kcwg_p", "%kcwg_q"
_WRITES = ("st", "atom", "red")


def _space(instr: Instruction) -> str:
    for m in instr.modifiers:
        if m in ("global", "shared", "local", "param", "const", "shared::cta"):
            return m
    return "generic"


def _width(instr: Instruction) -> int:
    types = [m for m in instr.modifiers if m[:1] in "busf" and m[1:].isdigit()]
    size = type_size(types[-1]) if types else 0
    count = next((int(m[1:]) for m in instr.modifiers if m in ("v2", "v4", "v8")), 1)
    return size * count


def guarded_stores(function: Function) -> tuple[Instruction, ...]:
    """The instructions of ``function`` the guard checks: global and generic st/atom/red."""
    return tuple(i for i in function.instructions
                 if i.opcode in _WRITES and _space(i) in ("global", "generic"))


def guard_table(ranges: Iterable[tuple[int, int]]) -> bytes:
    """The table a guarded kernel reads: sorted ``(lo, hi)`` pairs as little-endian u64.

    Examples
    --------
    >>> len(guard_table([(32, 48), (0, 16)]))
    32
    """
    pairs = sorted((int(a), int(b)) for a, b in ranges if int(b) > int(a))
    return np.asarray(pairs, dtype="<u8").reshape(-1).tobytes()


def _i(opcode, mods, *ops, guard: Guard | None = None) -> Instruction:
    return Instruction(opcode, tuple(mods), tuple(ops), guard)


def _check(site: int, instr: Instruction, table: str, count: str) -> list:
    addr = instr.operands[1] if instr.opcode == "atom" else instr.operands[0]
    if type(addr) is not Address:
        raise UnsupportedFeature(f"store address {addr!r}", instr.full_opcode)
    ok, loop = f"$KCWG_OK_{site}", f"$KCWG_LOOP_{site}"
    out = []
    if instr.guard is not None:
        # the check runs exactly when the store does
        g = instr.guard
        out.append(_i("bra", (), Symbol(ok), guard=Guard(g.register, not g.negated)))
    base = addr.base
    if type(base) is Register:
        out.append(_i("add", ("u64",), Register(_A), base, Immediate(addr.offset)))
    elif type(base) is Symbol:
        out += [_i("mov", ("u64",), Register(_A), base),
                _i("add", ("u64",), Register(_A), Register(_A), Immediate(addr.offset))]
    else:
        out.append(_i("mov", ("u64",), Register(_A), Immediate(addr.offset)))
    out += [
        _i("add", ("u64",), Register(_E), Register(_A), Immediate(_width(instr))),
        _i("ld", ("param", "u64"), Register(_T), Address(Symbol(table))),
        _i("ld", ("param", "u32"), Register(_N), Address(Symbol(count))),
        Label(loop),
        _i("setp", ("eq", "u32"), Register(_P), Register(_N), Immediate(0)),
        _i("trap", (), guard=Guard(_P)),
        _i("ld", ("global", "u64"), Register(_LO), Address(Register(_T))),
        _i("ld", ("global", "u64"), Register(_HI), Address(Register(_T), 8)),
        _i("setp", ("ge", "u64"), Register(_P), Register(_A), Register(_LO)),
        _i("setp", ("le", "u64"), Register(_Q), Register(_E), Register(_HI)),
        _i("and", ("pred",), Register(_P), Register(_P), Register(_Q)),
        _i("bra", (), Symbol(ok), guard=Guard(_P)),
        _i("add", ("u64",), Register(_T), Register(_T), Immediate(16)),
        _i("sub", ("u32",), Register(_N), Register(_N), Immediate(1)),
        _i("bra", (), Symbol(loop)),
        Label(ok),
    ]
    return out


def _callees(function: Function) -> set[str]:
    out = set()
    for i in function.instructions:
        if i.opcode == "call":
            out |= {o.name for o in i.operands if type(o) is Symbol}
    return out


def rewrite_store_guard(module: Module, kernel: str) -> str:
    """PTX text of ``module`` with ``kernel``'s stores checked against a range table.

    Parameters
    ----------
    module : Module
        The parsed module.
    kernel : str
        The ``.entry`` to rewrite; it gains the parameters ``<kernel>_kcwg_table`` (u64)
        and ``<kernel>_kcwg_count`` (u32) after its own (see the module documentation).

    Returns
    -------
    str
        The rewritten module (other functions unchanged).

    Raises
    ------
    UnsupportedFeature
        No such kernel, or it calls a device function that stores to global or generic
        memory (that store would go unchecked).
    """
    functions = {f.name: f for f in module.items if type(f) is Function}
    target = functions.get(kernel)
    if target is None or target.body is None or not target.is_kernel:
        raise UnsupportedFeature(f"kernel {kernel} with a body", module.filename or "module")
    seen, todo = set(), list(_callees(target))
    while todo:
        name = todo.pop()
        if name in seen or name not in functions:
            continue
        seen.add(name)
        callee = functions[name]
        if callee.body is not None and guarded_stores(callee):
            raise UnsupportedFeature(f"store guard for {kernel}: the called function {name} "
                                     f"stores to global memory and is not rewritten", kernel)
        todo += _callees(callee)
    items = [(_rewrite(item) if item is target else item) for item in module.items]
    return print_ptx(replace(module, items=tuple(items)))


def _param_size(p: Param) -> int:
    size = max(1, type_size(p.type)) * (int(p.vector[1:]) if p.vector else 1)
    for n in p.array:
        size *= n or 1
    return size


def _rewrite(function: Function) -> Function:
    table, count = f"{function.name}_kcwg_table", f"{function.name}_kcwg_count"
    end = max((p.offset + _param_size(p) for p in function.params), default=0)
    offset = (end + 7) // 8 * 8
    params = function.params + (Param(table, "u64", offset), Param(count, "u32", offset + 8))
    stores = {id(i) for i in guarded_stores(function)}
    body = [RegisterDecl("b64", (_A, _E, _T, _LO, _HI)), RegisterDecl("b32", (_N,)),
            RegisterDecl("pred", (_P, _Q))]
    site = 0
    for stmt in function.body:
        if type(stmt) is Instruction and id(stmt) in stores:
            body += _check(site, stmt, table, count)
            site += 1
        body.append(stmt)
    return replace(function, params=params, body=tuple(body))
