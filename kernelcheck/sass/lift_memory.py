"""Translation rules of the SASS lifter for memory instructions, calls and opaque values.

* ``LDG``/``STG``/``LD``/``ST`` (``.E``: a 64-bit address in a register pair; sm_90 adds the
  memory descriptor ``desc[URx]``, which carries cache policy, not the address) become
  ``ld``/``st`` of the global or generic space with the access width of their size modifier
  (32 bits by default, ``.64``, ``.128``, ``.U8`` ...).
* ``ATOMG``/``ATOM``/``RED``/``REDG`` become ``atom``/``red`` with their operation; a result
  register ``RZ`` means the old value is not used.
* ``LDGSTS`` (asynchronous copy global → shared) reads global memory: ``cp.async``.
* Shared and local accesses (``LDS``, ``STS``, ``ATOMS``, ``LDL``, ``STL``, ``LDSM``) never
  break idempotency: only their destinations are defined (opaque).
* ``CALL.REL`` to a subroutine of the same code is inlined before the lift
  (:mod:`kernelcheck.sass.inline`); a call the inliner refused is unmodelled, with its
  reason.
* ``CALL.ABS`` to ``__assertfail`` (a failed device-side assertion, which aborts the
  launch; :mod:`kernelcheck.sass.calls`) becomes ``trap``; to ``vprintf``, which writes only
  the runtime's printf buffer, it makes every register opaque (the callee's register use
  is not known); any other absolute call is unmodelled. ``BPT.TRAP`` (PTX's ``trap``)
  becomes ``trap`` too (:mod:`kernelcheck.sass.lift_rules`).
* Anything else that may write memory (surface and tensor-memory operations, bulk copies,
  indirect branches, unknown opcodes) becomes an unmodelled instruction.
"""

from __future__ import annotations

from dataclasses import replace

from kernelcheck.ir.nodes import (
    Address,
    Instruction,
    MemoryRef,
    Register,
    Symbol,
    VectorOperand,
)
from kernelcheck.ir.operands import (
    SASS_KNOWN_OPCODES,
    access_kind,
    ldgmc_width,
    memory_spaces,
)
from kernelcheck.ir.operands import defs as _defs
from kernelcheck.ir.operands import uses as _uses
from kernelcheck.sass.calls import ASSERT_FAIL, PRINTF, call_target
from kernelcheck.sass.lift_state import is_predicate
from kernelcheck.sass.lift_values import (
    build64,
    opaque32,
    opaque_pred,
    pair64,
    src32,
    write32,
    write64,
)

__all__ = ["MEMORY_RULES", "REGISTER_ONLY", "atomic_operation", "call", "opaque_instruction"]

_WIDTHS = {"U8": (1, "u8"), "S8": (1, "s8"), "U16": (2, "u16"), "S16": (2, "s16"),
           "64": (8, "b64"), "128": (16, "b128")}
_ATOMIC_OPS = {"ADD": "add", "MIN": "min", "MAX": "max", "INC": "inc", "DEC": "dec",
               "AND": "and", "OR": "or", "XOR": "xor", "EXCH": "exch", "CAS": "cas",
               "CAST": "cas"}
_SAFE_SPACES = {"shared", "local", "const"}
#: Opcodes the operand tables do not describe that only write registers (no memory, no
#: control flow), with how many consecutive registers from the first operand they may
#: write: an over-count only makes more values opaque. ``LEPC`` loads the 64-bit program
#: counter; the ``MMA`` forms write one accumulator fragment (at most 8 registers);
#: ``UP2UR`` packs uniform predicates into a uniform register (sm_100); ``I2IP`` packs
#: two integers, narrowed, into the low lanes of one register (``I2IP.S8.S32.SAT Rd, Ra,
#: Rb, Rc``, as CUTLASS's int8 epilogues have it).
REGISTER_ONLY = {"LEPC": 2, "HMMA": 8, "IMMA": 8, "DMMA": 8, "BMMA": 8, "I2FP": 1,
                 "F2FP": 1, "F2IP": 1, "I2IP": 1, "VABSDIFF": 1, "VABSDIFF4": 1, "FMUL2": 2,
                 "FADD2": 2, "FFMA2": 2, "UP2UR": 1}


def opaque_instruction(lifter, instr: Instruction, skip_preds: bool = False) -> None:
    """Lift ``instr`` as a black box: its destinations become opaque values (from memory
    when it reads memory), or the whole instruction is unmodelled when it may write memory
    the analysis must see."""
    if instr.opcode in _NO_GLOBAL_EFFECT:
        return _opaque_registers(lifter, _defs(instr))
    if instr.opcode in REGISTER_ONLY:
        first = instr.operands[0] if instr.operands else None
        if type(first) is Register and not is_predicate(first.name):
            sources = [r for r in (_virtual(lifter, n) for n in _uses(instr)) if r]
            for name in _registers(lifter, first.name, REGISTER_ONLY[instr.opcode]):
                if name not in ("RZ", "URZ"):
                    write32(lifter, name, lambda r: opaque32(lifter, r, sources))
            return
    if _may_write_memory(instr):
        lifter.unknown()
        return
    memory = bool(set(memory_spaces(instr)) - {"shared", "local"}) or (
        instr.opcode not in SASS_KNOWN_OPCODES)
    sources = [src for src in (_virtual(lifter, n) for n in _uses(instr)) if src]
    names = _defs(instr) if instr.known else _defs(instr)
    for name in names:
        if name in ("RZ", "URZ", "PT", "UPT"):
            continue
        if is_predicate(name):
            if not skip_preds:
                opaque_pred(lifter, lifter.reg(name))
                lifter.state.kill(name)
            continue
        write32(lifter, name, lambda r: opaque32(lifter, r, sources, memory))


#: sm_90 opcodes that touch no global memory: ``SYNCS`` (operations on shared-memory
#: barriers: init, arrive, expect-tx, phase checks), ``ENDCOLLECTIVE`` (the end of a
#: warp-collective region), ``UTMACCTL`` (tensor-map descriptor cache control) and
#: ``B2R`` (barrier state into a register), ``UCGABAR_ARV``/``UCGABAR_WAIT`` (the cluster
#: barrier). Their destinations become opaque values.
_NO_GLOBAL_EFFECT = frozenset({"SYNCS", "ENDCOLLECTIVE", "UTMACCTL", "B2R", "UCGABAR_ARV",
                               "UCGABAR_WAIT"})


def _virtual(lifter, name: str):
    if name in ("RZ", "URZ", "PT", "UPT") or is_predicate(name):
        return None
    return lifter.reg(name) if name[:1] in ("R", "U") else None


def _may_write_memory(instr: Instruction) -> bool:
    if instr.opcode in ("BRX", "JMX", "CALL"):
        return True
    if instr.opcode not in SASS_KNOWN_OPCODES:
        return True
    kind = access_kind(instr)
    if kind in ("write", "atomic", "copy"):
        spaces = memory_spaces(instr)
        return not spaces or spaces[0] not in _SAFE_SPACES
    return False


def _width(instr: Instruction) -> tuple[int, str]:
    for modifier in instr.modifiers:
        if modifier in _WIDTHS:
            return _WIDTHS[modifier]
    return 4, "b32"


def _address(lifter, instr: Instruction, operand) -> Address | None:
    """The generic/global address of a memory operand as ``[%reg + offset]``."""
    if type(operand) is not MemoryRef or operand.scale != 1 or operand.base_modifiers:
        return None
    if operand.base is None or operand.base.name in ("RZ", "URZ"):
        if operand.uniform is None:
            return None
        base = pair64(lifter, operand.uniform)
        return Address(base, operand.offset)
    if "E" not in instr.modifiers and not operand.wide:
        return None
    base = pair64(lifter, operand.base)
    if operand.uniform is not None and operand.uniform.name not in ("URZ",):
        # [R2.64+UR4]: a 32-bit uniform offset added to the 64-bit base.
        extra = lifter.tmp("b64")
        lifter.emit("cvt", ("u64", "u32"), (extra, src32(lifter, operand.uniform)),
                    guard=False)
        total = lifter.tmp("b64")
        lifter.emit("add", ("s64",), (total, base, extra), guard=False)
        base = total
    return Address(base, operand.offset)


def _registers(lifter, first: str, count: int) -> list[str]:
    prefix = "UR" if first.startswith("UR") else "R"
    number = first[len(prefix):]
    if not number.isdigit():
        return [first]
    return [f"{prefix}{int(number) + k}" for k in range(count)]


def _data(lifter, first, width: int):
    """The PTX operand for the data registers of a ``width``-byte access."""
    if type(first) is not Register:
        return src32(lifter, first), "b32"
    words = max(width // 4, 1)
    if first.name in ("RZ", "URZ"):
        return src32(lifter, first), "b32"
    names = _registers(lifter, first.name, words)
    regs = [lifter.reg(n) for n in names]
    if words == 1:
        return regs[0], None
    return VectorOperand(tuple(regs)), f"v{words}"


def _global_space(instr: Instruction) -> str:
    return "global" if instr.opcode in ("LDG", "STG", "ATOMG", "REDG") else ""


def _load(lifter, instr: Instruction) -> None:
    spaces = memory_spaces(instr)
    if spaces and spaces[0] in ("shared", "local"):
        return opaque_instruction(lifter, instr)
    dest = instr.operands[0] if instr.operands else None
    target = instr.operands[1] if len(instr.operands) > 1 else None
    width, kind = _width(instr)
    address = _address(lifter, instr, target)
    if type(dest) is not Register or address is None:
        return _unknown_read(lifter, instr)
    space = _global_space(instr)
    mods = ((space,) if space else ())
    if width >= 8:
        words = width // 4
        names = _registers(lifter, dest.name, words)
        regs = tuple(lifter.reg(n) if n not in ("RZ", "URZ") else lifter.tmp("b32")
                     for n in names)
        lifter.emit("ld", mods + (f"v{words}", "b32"), (VectorOperand(regs), address))
        for name in names:
            lifter.state.kill(name)
        return
    if dest.name in ("RZ", "URZ"):
        lifter.emit("ld", mods + (kind,), (lifter.tmp("b32"), address))
        return
    write32(lifter, dest.name, lambda r: lifter.emit("ld", mods + (kind,), (r, address)),
            pure=False)


def _multimem_load(lifter, instr: Instruction) -> None:
    """``LDGMC`` (``multimem.ld_reduce``): a global read of every copy of a multicast
    address, reduced into the destination; lifted as the global read of its width at the
    address operand (``F32x4``, ``BF16x8``: 16 bytes)."""
    width = ldgmc_width(instr.modifiers)
    if width is None:
        return _unknown_read(lifter, instr)
    mods = ("E",) + (("64",) if width == 8 else ("128",) if width == 16 else ())
    _load(lifter, replace(instr, opcode="LDG", modifiers=mods))


def _unknown_read(lifter, instr: Instruction) -> None:
    """A global read whose address is not modelled: an access at an opaque address."""
    dest = lifter.tmp("b64")
    lifter.emit("prmt", ("b64",), (dest,), guard=False)
    sink = lifter.tmp("b32")
    lifter.emit("ld", ("global", "b32") if _width(instr)[0] == 4 else (
        "global", f"v{max(_width(instr)[0] // 4, 1)}", "b32") if _width(instr)[0] >= 8
        else ("global", _width(instr)[1]), (sink, Address(dest, 0)))
    opaque_instruction(lifter, instr)


def _store(lifter, instr: Instruction) -> None:
    spaces = memory_spaces(instr)
    if spaces and spaces[0] in ("shared", "local"):
        return
    if len(instr.operands) < 2:
        return lifter.unknown()
    width, kind = _width(instr)
    address = _address(lifter, instr, instr.operands[0])
    if address is None:
        return lifter.unknown()
    value, vector = _data(lifter, instr.operands[1], width)
    space = _global_space(instr)
    mods = ((space,) if space else ())
    if vector and vector.startswith("v"):
        lifter.emit("st", mods + (vector, "b32"), (address, value))
    else:
        lifter.emit("st", mods + (kind,), (address, value))


def _atomic(lifter, instr: Instruction) -> None:
    spaces = memory_spaces(instr)
    if spaces and spaces[0] in ("shared", "local"):
        return opaque_instruction(lifter, instr)
    mods = instr.modifiers
    op = atomic_operation(instr)
    reduction = instr.opcode in ("RED", "REDG")
    operands = list(instr.operands)
    if not reduction and operands and type(operands[0]) is Register and is_predicate(
            operands[0].name):
        pred = operands.pop(0)
        if pred.name not in ("PT", "UPT"):
            opaque_pred(lifter, lifter.reg(pred.name))
            lifter.state.kill(pred.name)
    if op is None:
        return lifter.unknown()
    wide = "64" in mods
    kind = _atomic_type(mods)
    if reduction:
        target, values = operands[0] if operands else None, operands[1:]
        dest = None
    else:
        dest = operands[0] if operands else None
        target, values = (operands[1], operands[2:]) if len(operands) > 1 else (None, [])
    address = _address(lifter, instr, target)
    if address is None or not values:
        return lifter.unknown()
    data = []
    for value in values:
        if wide and type(value) is Register and value.name not in ("RZ", "URZ"):
            data.append(pair64(lifter, value))
        else:
            data.append(pair64(lifter, value) if wide else src32(lifter, value))
    space = _global_space(instr)
    space_mods = (space,) if space else ()
    if reduction:
        lifter.emit("red", space_mods + (op, kind), (address,) + tuple(data))
        return
    if type(dest) is not Register or dest.name in ("RZ", "URZ"):
        result = lifter.tmp("b64" if wide else "b32")
        lifter.emit("atom", space_mods + (op, kind), (result, address) + tuple(data))
        return
    if wide:
        result = lifter.tmp("b64")
        lifter.emit("atom", space_mods + (op, kind), (result, address) + tuple(data))
        for name in _registers(lifter, dest.name, 2):
            write32(lifter, name, lambda r: lifter.emit("ld", ("local", "b32"),
                                                        (r, Address(None, 0))))
        return
    write32(lifter, dest.name, lambda r: lifter.emit(
        "atom", space_mods + (op, kind), (r, address) + tuple(data)), pure=False)


def atomic_operation(instr: Instruction) -> str | None:
    """The operation of a SASS atomic or reduction as the analysis names it (``add``,
    ``cas`` ...), from its first modifier that names one; ``None`` if none does."""
    return next((_ATOMIC_OPS[m] for m in instr.modifiers if m in _ATOMIC_OPS), None)


def _atomic_type(mods) -> str:
    wide = "64" in mods
    if "F32" in mods:
        return "f32"
    if "F64" in mods:
        return "f64"
    if "F16x2" in mods or "F16X2" in mods or "BF16x2" in mods:
        return "b32"
    if "S32" in mods:
        return "s32"
    if "S64" in mods:
        return "s64"
    return "u64" if wide else "u32"


def _ldgsts(lifter, instr: Instruction) -> None:
    if len(instr.operands) < 2:
        return lifter.unknown()
    width = next((w for m, (w, _) in _WIDTHS.items() if m in instr.modifiers), 4)
    source = instr.operands[1]
    address = _address(lifter, instr, source)
    if address is None:
        return lifter.unknown()
    shared = lifter.tmp("b64")
    lifter.emit("prmt", ("b64",), (shared,), guard=False)
    from kernelcheck.ir.nodes import Immediate

    lifter.emit("cp", ("async", "ca", "shared", "global"),
                (Address(shared, 0), address, Immediate(width)))


def call(lifter, instr: Instruction) -> None:
    """``CALL.ABS`` to ``__assertfail`` or ``vprintf`` (see the module documentation), and
    calls of register-only subroutines the inliner summarised (the registers they write
    become opaque); every other call left in the code is unmodelled, with the reason: the
    local calls the inliner (:mod:`kernelcheck.sass.inline`) refused, indirect calls,
    absolute calls of other functions."""
    if "ABS" in instr.modifiers:
        callee = call_target(lifter.sass, lifter.block.instructions, instr)
        first = instr.operands[0] if instr.operands else None
        if callee is None and type(first) is Register:
            # The address loaded from bank 4 in an earlier block (a fact of the lifter).
            fact = lifter.state.tags.get(first.name)
            callee = fact[1] if fact and fact[0] == "fn" else None
        if callee == ASSERT_FAIL:
            lifter.emit("trap")
            lifter.stopped = lifter.guard is None
            return None
        if callee == PRINTF:
            return _clobber_every_register(lifter)
        target = next((o for o in instr.operands if type(o) is Symbol), None)
        if callee is None and target is not None and type(instr.operands[0]) is Symbol:
            callee = target.name
        return lifter.unknown(f"call of {callee}" if callee else "indirect call")
    operand = instr.operands[0] if instr.operands else None
    if type(operand) is not Symbol:
        return lifter.unknown("indirect call")
    summary = lifter.summarized.get(instr.index)
    if summary is not None:
        # A subroutine that touches no memory but the stack and shared memory: every
        # register it writes gets a value the analysis does not model.
        # (A guarded call writes them under its guard: old value or opaque.)
        written, shared = summary
        division = lifter.divisions.get(instr.index)
        if division is None or lifter.guard is not None:
            return _opaque_registers(lifter, written, shared)
        return _div_u64(lifter, division, written, shared)
    return lifter.unknown(lifter.refused.get(
        instr.index, f"call of {operand.name}: not a subroutine of this code"))


def _div_u64(lifter, division, written, shared: bool) -> None:
    """A call of ptxas's 64-bit division (:mod:`kernelcheck.sass.division64`): the
    quotient registers get ``div.u64`` of the operands the call found, every other register
    the subroutine writes an opaque value."""
    operands = []
    for lo, hi in (division.dividend, division.divisor):
        value = lifter.tmp("b64")
        lifter.emit("mov", ("b64",), (value, build64(lifter, Register(lo), Register(hi))),
                    guard=False)
        operands.append(value)
    _opaque_registers(lifter, written, shared)
    quotient = lifter.tmp("b64")
    lifter.emit("div", ("u64",), (quotient, *operands), guard=False)
    write64(lifter, *division.quotient, quotient)


def _opaque_registers(lifter, names, memory: bool = False) -> None:
    """Each SASS register of ``names`` (predicates included) gets a value the analysis does
    not model (from memory if ``memory``)."""
    for name in names:
        if name in ("RZ", "URZ", "PT", "UPT"):
            continue
        if is_predicate(name):
            opaque_pred(lifter, lifter.reg(name))
            lifter.state.kill(name)
        else:
            write32(lifter, name, lambda r: opaque32(lifter, r, (), memory))


def _clobber_every_register(lifter) -> None:
    """A call of ``vprintf``: it writes only the runtime's printf buffer, which the program
    never reads, but which registers it leaves intact is the ABI's business: every register
    the function names becomes opaque after it."""
    if lifter.every_register is None:
        lifter.every_register = tuple(dict.fromkeys(
            name for instr in lifter.sass.instructions for name in _defs(instr) + _uses(instr)
            if name[:1] in ("R", "U", "P")))
    _opaque_registers(lifter, lifter.every_register)


MEMORY_RULES = {
    "LDG": _load, "LD": _load, "LDS": _load, "LDL": _load, "STG": _store, "ST": _store,
    "STS": _store, "STL": _store, "ATOMG": _atomic, "ATOM": _atomic, "RED": _atomic,
    "REDG": _atomic, "ATOMS": _atomic, "LDGSTS": _ldgsts, "LDGMC": _multimem_load,
}

_ = (Register,)
