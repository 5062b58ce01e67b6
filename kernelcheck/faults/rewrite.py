"""A PTX rewriter that plants one register bit flip, so a campaign can run on a real GPU.

:func:`rewrite_bit_flip` returns the module with a kernel changed so that thread ``tid`` of
block ``ctaid`` flips ``bits`` of a destination register of instruction ``instruction``
right after its ``occurrence``-th execution, the fault that
:class:`kernelcheck.emu.executor.BitFlip` injects on the emulator:

* at the kernel's entry, a per-thread counter ``%kcfi_n`` is zeroed and ``%kcfi_sel`` is set
  when ``%tid`` and ``%ctaid`` equal the chosen thread;
* after the instruction, the counter counts the executions (under the instruction's own
  guard), and when it equals ``occurrence`` in the chosen thread, an ``xor`` with the bit
  mask (``not`` for a predicate) flips the destination.

The rewritten module is printed by :func:`kernelcheck.ptx.printer.print_ptx`; it adds four
registers and a few instructions and changes nothing else.
"""

from __future__ import annotations

from dataclasses import replace

from kernelcheck.errors import UnsupportedFeature
from kernelcheck.ir.nodes import (
    Function,
    Guard,
    Immediate,
    Instruction,
    Module,
    PredicatePair,
    Register,
    RegisterDecl,
    SpecialRegister,
    VectorOperand,
    type_size,
)
from kernelcheck.ptx.printer import print_ptx

__all__ = ["rewrite_bit_flip", "destination_registers"]

_N, _SEL, _HIT, _TMP, _G = "%kcfi_n", "%kcfi_sel", "%kcfi_hit", "%kcfi_t", "%kcfi_g"
_NO_DEST = frozenset({"st", "red", "bra", "call", "bar", "ret", "exit", "barrier",
                      "prefetch", "trap"})


def destination_registers(instr: Instruction) -> tuple[str, ...]:
    """The destination registers of ``instr`` (the emulator's injection targets)."""
    if not instr.operands or instr.opcode in _NO_DEST:
        return ()
    first = instr.operands[0]
    if type(first) is Register:
        return (first.name,)
    if type(first) is VectorOperand:
        return tuple(e.name for e in first.elements if type(e) is Register)
    if type(first) is PredicatePair:
        return (first.first.name,)
    return ()


def _i(opcode: str, mods: tuple[str, ...], *ops, guard: Guard | None = None) -> Instruction:
    return Instruction(opcode, mods, tuple(ops), guard)


def _selection(ctaid, tid) -> list:
    out = [RegisterDecl("b32", (_N, _TMP)), RegisterDecl("pred", (_SEL, _HIT, _G)),
           _i("mov", ("u32",), Register(_N), Immediate(0)),
           _i("setp", ("eq", "u32"), Register(_SEL), Immediate(0), Immediate(0))]
    for name, value in zip(("%tid.x", "%tid.y", "%tid.z", "%ctaid.x", "%ctaid.y", "%ctaid.z"),
                           (*tid, *ctaid), strict=True):
        out += [_i("mov", ("u32",), Register(_TMP), SpecialRegister(name)),
                _i("setp", ("eq", "u32"), Register(_HIT), Register(_TMP), Immediate(value)),
                _i("and", ("pred",), Register(_SEL), Register(_SEL), Register(_HIT))]
    return out


def _flip(instr: Instruction, dest: str, reg_type: str, occurrence: int, bits: int) -> list:
    out = [_i("add", ("u32",), Register(_N), Register(_N), Immediate(1), guard=instr.guard),
           _i("setp", ("eq", "u32"), Register(_HIT), Register(_N), Immediate(occurrence)),
           _i("and", ("pred",), Register(_HIT), Register(_HIT), Register(_SEL))]
    if instr.guard is not None:
        g = instr.guard
        if g.negated:
            out.append(_i("not", ("pred",), Register(_G), Register(g.register)))
            out.append(_i("and", ("pred",), Register(_HIT), Register(_HIT), Register(_G)))
        else:
            out.append(_i("and", ("pred",), Register(_HIT), Register(_HIT),
                          Register(g.register)))
    hit = Guard(_HIT)
    if reg_type == "pred":
        if bits & 1:
            out.append(_i("not", ("pred",), Register(dest), Register(dest), guard=hit))
        return out
    size = type_size(reg_type)
    if size not in (2, 4, 8):
        raise UnsupportedFeature(f"bit flip in a {size}-byte register ({dest})")
    mask = bits & ((1 << 8 * size) - 1)
    out.append(_i("xor", (f"b{8 * size}",), Register(dest), Register(dest), Immediate(mask),
                  guard=hit))
    return out


def rewrite_bit_flip(module: Module, kernel: str, instruction: int, ctaid, tid,
                     occurrence: int, bits: int, element: int = 0) -> str:
    """PTX text of ``module`` with a bit flip planted in ``kernel`` (see the module docs).

    Parameters
    ----------
    module : Module
        The parsed module.
    kernel : str
        The kernel (``.entry``) holding the instruction; a counter in a device function
        would restart at every call, so device functions are not supported.
    instruction : int
        Index of the instruction in the kernel.
    ctaid, tid : tuple of 3 int
        The thread whose register is flipped.
    occurrence : int
        Which execution by that thread (1-based).
    bits : int
        The mask xor-ed into the register (bit 0 toggles a predicate).
    element : int
        Which destination of a vector instruction.

    Raises
    ------
    UnsupportedFeature
        The instruction has no destination register, or it is 1 byte wide.
    """
    items = []
    found = False
    for item in module.items:
        if type(item) is Function and item.name == kernel and item.body is not None:
            item = _rewrite(item, instruction, tuple(ctaid), tuple(tid), occurrence, bits,
                            element)
            found = True
        items.append(item)
    if not found:
        raise UnsupportedFeature(f"kernel {kernel} with a body", module.filename or "module")
    return print_ptx(replace(module, items=tuple(items)))


def _rewrite(function: Function, index: int, ctaid, tid, occurrence, bits, element):
    if not function.is_kernel:
        raise UnsupportedFeature("bit flip planted in a device function", function.name)
    instr = function.instructions[index]
    dests = destination_registers(instr)
    if not dests:
        raise UnsupportedFeature(f"bit flip in '{instr.full_opcode}', which has no "
                                 f"destination register", f"{function.name}:{index}")
    dest = dests[min(element, len(dests) - 1)]
    reg_type = function.register_types.get(dest, "b32").lstrip(".")
    body = []
    placed = False
    for stmt in function.body:
        if not placed and type(stmt) is Instruction:
            body += _selection(ctaid, tid)
            placed = True
        body.append(stmt)
        if stmt is instr:
            body += _flip(instr, dest, reg_type, occurrence, bits)
    return replace(function, body=tuple(body))
