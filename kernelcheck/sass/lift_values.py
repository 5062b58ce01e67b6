"""Reading and writing SASS operands in lifted (PTX-form) code.

The functions here take the :class:`~kernelcheck.sass.lift.Lifter` of the function being
lifted and emit the PTX-form instructions that compute an operand's value into a virtual
register, or that store a result into the virtual registers of a SASS destination.

Constant bank 0 (sm_70 and later, CUDA 12/13): the kernel parameters start at the offset
EIATTR_PARAM_CBANK records (0x160 up to sm_89, 0x210 from sm_90); ``c[0x0][0x0]``,
``[0x4]``, ``[0x8]`` hold ``%ntid.x/y/z`` and ``[0xc]``, ``[0x10]``, ``[0x14]``
``%nctaid.x/y/z`` (checked against the PTX of the fixture kernels in
tests/sass/test_analysis_lift.py). Any other constant-bank word is an opaque value that
does not come from global memory.
"""

from __future__ import annotations

from kernelcheck.ir.nodes import (
    Address,
    ConstantRef,
    Immediate,
    ModifiedOperand,
    NegatedPredicate,
    Register,
    SpecialRegister,
    Symbol,
)
from kernelcheck.sass.calls import bank2_words, bank_objects
from kernelcheck.sass.lift_params import indexed_param_read
from kernelcheck.sass.lift_state import is_predicate
from kernelcheck.sass.params import param_at

__all__ = ["src32", "src_pred", "pair64", "build64", "write32", "write64", "opaque32",
           "opaque_pred", "const_pred", "kill_defs", "cbank_offset", "zero", "is_zero",
           "plain"]

_DIMS = {0x0: "%ntid.x", 0x4: "%ntid.y", 0x8: "%ntid.z",
         0xC: "%nctaid.x", 0x10: "%nctaid.y", 0x14: "%nctaid.z"}
_SPECIALS = {"SR_TID.X": "%tid.x", "SR_TID.Y": "%tid.y", "SR_TID.Z": "%tid.z",
             "SR_CTAID.X": "%ctaid.x", "SR_CTAID.Y": "%ctaid.y", "SR_CTAID.Z": "%ctaid.z",
             "SR_LANEID": "%laneid"}
_ZERO = ("RZ", "URZ", "SRZ")


def plain(operand):
    """``operand`` without ``.reuse`` and other suffixes that do not change its value
    (``None`` when a suffix does: ``.H1``, ``.B2``, ...)."""
    if type(operand) is ModifiedOperand:
        if not (operand.negate or operand.absolute or operand.invert) and all(
                s in ("reuse", "64") for s in operand.suffixes):
            return operand.operand
        return None
    return operand


def is_zero(operand) -> bool:
    operand = plain(operand)
    return (type(operand) is Register and operand.name in _ZERO) or (
        type(operand) is Immediate and operand.kind == "int" and operand.value == 0)


def zero():
    return Immediate(0)


def cbank_offset(lifter, operand) -> int | None:
    """The static offset of a read of constant bank 0, or None."""
    operand = plain(operand)
    if type(operand) is ConstantRef and operand.bank == 0:
        return operand.static_offset
    return None


def opaque32(lifter, dest: Register, sources=(), memory: bool = False) -> None:
    """``dest`` := a value the analysis does not model (from memory if ``memory``)."""
    if memory:
        lifter.emit("ld", ("local", "b32"), (dest, Address(None, 0)))
    else:
        lifter.emit("prmt", ("b32",), (dest,) + tuple(s for s in sources
                                                      if type(s) is Register))


def opaque_pred(lifter, dest: Register) -> None:
    lifter.emit("xor", ("pred",), (dest,))


def const_pred(lifter, dest: Register, value: bool) -> None:
    lifter.emit("setp", ("eq" if value else "ne", "u32"), (dest, Immediate(0), Immediate(0)))


def _param_read(lifter, offset: int, width: int, signed: bool = False):
    """A read of ``width`` bytes of constant bank 0 at ``offset`` as a parameter, or None."""
    if lifter.cbank is None:
        return None
    hit = param_at(lifter.sass, ConstantRef(0, offset))
    if hit is None or hit.byte + width > max(hit.param.size, 1):
        return None
    kind = {1: "u8", 2: "u16", 4: "u32", 8: "u64"}[width]
    dest = lifter.tmp("b64" if width == 8 else "b32")
    lifter.emit("ld", ("param", kind), (dest, Address(Symbol(hit.param.name), hit.byte)),
                guard=False)
    if signed and width < 4:
        wide = lifter.tmp("b32")
        lifter.emit("cvt", ("s32", "s" + kind[1:]), (wide, dest), guard=False)
        return wide
    return dest


def constant32(lifter, operand: ConstantRef, width: int = 4, signed: bool = False):
    """The value of a 32-bit (or narrower) constant-bank read."""
    offset = operand.static_offset
    if operand.bank == 0 and offset is None:
        found = indexed_param_read(lifter, operand, width, signed)
        if found is not None:
            return found
    if operand.bank == 0 and offset is not None:
        if offset in _DIMS and width == 4:
            dest = lifter.tmp("b32")
            lifter.emit("mov", ("u32",), (dest, SpecialRegister(_DIMS[offset])), guard=False)
            return dest
        found = _param_read(lifter, offset, width, signed)
        if found is not None:
            return found
    words = bank2_words(lifter.sass) if operand.bank == 2 else {}
    if offset is not None and width == 4 and offset in words:
        dest = lifter.tmp("b32")
        lifter.emit("mov", ("b32",), (dest, Immediate(words[offset])), guard=False)
        return dest
    dest = lifter.tmp("b32")
    opaque32(lifter, dest)
    return dest


def src32(lifter, operand):
    """A PTX operand (register or immediate) holding the 32-bit value of a SASS source."""
    if type(operand) is ModifiedOperand:
        inner = plain(operand)
        if inner is not None:
            return src32(lifter, inner)
        if operand.absolute or any(s not in ("reuse",) for s in operand.suffixes):
            dest = lifter.tmp("b32")
            opaque32(lifter, dest, (src32(lifter, operand.operand),))
            return dest
        value = src32(lifter, operand.operand)
        dest = lifter.tmp("b32")
        if operand.negate:
            lifter.emit("neg", ("s32",), (dest, value), guard=False)
        else:
            lifter.emit("not", ("b32",), (dest, value), guard=False)
        return dest
    kind = type(operand)
    if kind is Register:
        if operand.name.startswith("%"):
            return operand  # already a virtual register (a snapshot)
        if operand.name in _ZERO:
            return Immediate(0)
        fact = lifter.state.tags.get(operand.name)
        if fact is not None and fact[0] == "g" and fact[2] is None and (
                fact[3:] in lifter.guard_keys):
            return Register(fact[1])
        return lifter.reg(operand.name)
    if kind is Immediate:
        if operand.kind == "int":
            # The two's-complement reading of the word (``VIADD R3, R2, 0xffffff80`` adds
            # -128): congruent modulo 2**32, as every 32-bit value of the analysis is, and
            # a small difference stays small when the sum is widened.
            value = operand.value & 0xFFFFFFFF
            return Immediate(value - (1 << 32) if value >= 1 << 31 else value)
        return operand
    if kind is ConstantRef:
        return constant32(lifter, operand)
    if kind is SpecialRegister:
        dest = lifter.tmp("b32")
        if operand.name in _SPECIALS:
            lifter.emit("mov", ("u32",), (dest, SpecialRegister(_SPECIALS[operand.name])),
                        guard=False)
        else:
            opaque32(lifter, dest)
        return dest
    dest = lifter.tmp("b32")
    opaque32(lifter, dest)
    return dest


def src_pred(lifter, operand):
    """``True``/``False`` for ``PT``/``!PT``, else a ``Register`` or ``NegatedPredicate``."""
    negated = False
    if type(operand) is NegatedPredicate:
        negated, operand = True, operand.register
    if type(operand) is not Register or not is_predicate(operand.name):
        return None
    if operand.name in ("PT", "UPT"):
        return not negated
    register = lifter.reg(operand.name)
    return NegatedPredicate(register) if negated else register


def _tag(lifter, operand):
    operand = plain(operand)
    if type(operand) is Register:
        return lifter.state.tags.get(operand.name)
    return None


_CURRENT = object()


def build64(lifter, lo, hi, lo_fact=_CURRENT, lo_name: str | None = None,
            unchanged: bool = False) -> Register:
    """A 64-bit register holding ``hi:lo`` (two SASS operands), as structured as the facts
    allow (see :mod:`kernelcheck.sass.lift`).

    ``lo`` may be a snapshot (a virtual register copied earlier); ``lo_fact`` and
    ``lo_name`` then give the fact and the SASS register it was copied from, and
    ``unchanged`` whether that register still holds the snapshot's value (a sign word of
    the register is the sign word of the snapshot only then).
    """
    lo_p, hi_p = plain(lo), plain(hi)
    tags = lifter.state.tags
    if lo_p is not None and hi_p is not None:
        if type(lo_p) is Register and type(hi_p) is Register:
            name = lo_name or lo_p.name
            a = tags.get(lo_p.name) if lo_fact is _CURRENT else lo_fact
            b = tags.get(hi_p.name)
            if a and b and a[0] == b[0] == "v" and a[1] == b[1] and (a[2], b[2]) == (
                    "lo", "hi"):
                return Register(a[1])
            if a and b and a[0] == b[0] == "g" and a[1] == b[1] and (a[2], b[2]) == (
                    "lo", "hi") and a[3:] in lifter.guard_keys:
                return Register(a[1])
            if a and b and a[0] == "pl" and b[0] == "v" and b[2] == "hi":
                done = lifter.state.pending.get(("done",) + a[1:])
                if done is not None and done[1] == b[1]:
                    return Register(b[1])
            if b == ("sx", name) and (lo_fact is _CURRENT or unchanged):
                return _extend(lifter, src32(lifter, lo_p), True)
            if b and b[0] == "v" and b[2] == "hi" and b[1] in lifter.state.shl_source and (
                    a == ("shl",) + lifter.state.shl_source[b[1]]):
                return Register(b[1])
        if is_zero(hi_p):
            return _extend(lifter, src32(lifter, lo_p), False)
        lo_cb = cbank_offset(lifter, lo_p)
        hi_cb = cbank_offset(lifter, hi_p)
        lo_tag = _tag(lifter, lo_p) if lo_fact is _CURRENT else lo_fact
        if lo_cb is None and lo_tag and lo_tag[0] == "cb":
            lo_cb = lo_tag[1]
        if hi_cb is None and _tag(lifter, hi_p) and _tag(lifter, hi_p)[0] == "cb":
            hi_cb = _tag(lifter, hi_p)[1]
        if lo_cb is not None and hi_cb == lo_cb + 4 and lo_cb % 8 == 0:
            found = _param_read(lifter, lo_cb, 8)
            if found is not None:
                return found
        if type(lo_p) is Immediate and type(hi_p) is Immediate and lo_p.kind == "int" \
                and hi_p.kind == "int":
            dest = lifter.tmp("b64")
            value = (lo_p.value & 0xFFFFFFFF) | ((hi_p.value & 0xFFFFFFFF) << 32)
            lifter.emit("mov", ("b64",), (dest, Immediate(value)), guard=False)
            return dest
    a = _extend(lifter, src32(lifter, lo), False)
    b = _extend(lifter, src32(lifter, hi), False)
    shifted = lifter.tmp("b64")
    lifter.emit("shl", ("b64",), (shifted, b, Immediate(32)), guard=False)
    dest = lifter.tmp("b64")
    lifter.emit("add", ("s64",), (dest, a, shifted), guard=False)
    return dest


def _extend(lifter, value, signed: bool) -> Register:
    dest = lifter.tmp("b64")
    kind = ("s64", "s32") if signed else ("u64", "u32")
    lifter.emit("cvt", kind, (dest, value), guard=False)
    return dest


def pair64(lifter, operand) -> Register:
    """A 64-bit register holding the value of a 64-bit SASS source: a register pair
    ``R2`` (``R2:R3``), a constant-bank doubleword, ``RZ`` or an immediate."""
    operand_p = plain(operand)
    if operand_p is None:
        dest = lifter.tmp("b64")
        lifter.emit("prmt", ("b64",), (dest,), guard=False)
        return dest
    kind = type(operand_p)
    if kind is Register:
        name = operand_p.name
        if name in _ZERO:
            return _extend(lifter, Immediate(0), False)
        prefix = "UR" if name.startswith("UR") else "R"
        number = name[len(prefix):]
        if number.isdigit():
            hi = Register(f"{prefix}{int(number) + 1}")
            return build64(lifter, operand_p, hi)
    if kind is ConstantRef:
        offset = operand_p.static_offset
        if operand_p.bank == 0 and offset is None:
            found = indexed_param_read(lifter, operand_p, 8)
            if found is not None:
                return found
        if operand_p.bank == 0 and offset is not None:
            found = _param_read(lifter, offset, 8)
            if found is not None:
                return found
            return build64(lifter, operand_p, ConstantRef(0, offset + 4))
        words = bank2_words(lifter.sass) if operand_p.bank == 2 else {}
        if offset is not None and offset in words and offset + 4 in words:
            # A 64-bit compiler constant of bank 2 (its bytes are in the cubin).
            dest = lifter.tmp("b64")
            value = words[offset] | words[offset + 4] << 32
            lifter.emit("mov", ("b64",), (dest, Immediate(value)), guard=False)
            return dest
        symbol = bank_objects(lifter.sass).get((operand_p.bank, offset))
        if symbol is not None:
            # The doubleword the loader relocates to a module variable's address.
            dest = lifter.tmp("b64")
            lifter.emit("mov", ("u64",), (dest, Symbol(symbol)), guard=False)
            return dest
    if kind is Immediate and operand_p.kind == "int":
        dest = lifter.tmp("b64")
        lifter.emit("mov", ("b64",), (dest, Immediate(operand_p.value & (2**64 - 1))),
                    guard=False)
        return dest
    dest = lifter.tmp("b64")
    lifter.emit("prmt", ("b64",), (dest,), guard=False)
    return dest


def kill_defs(lifter, names) -> None:
    for name in names:
        lifter.state.kill(name)


def write32(lifter, dest_name: str, emit_value, pure: bool = True) -> None:
    """Write a SASS 32-bit register: ``emit_value(register)`` emits the computation.

    A guarded write of a ``pure`` value (no memory access) computes it unconditionally
    into a temporary and moves that under the guard; the register then holds the
    temporary whenever the same guard holds (a fact read by :func:`src32`), and the join
    of old and new values otherwise.
    """
    if dest_name in _ZERO or is_predicate(dest_name):
        return
    register = lifter.reg(dest_name)
    if lifter.guard is None or not pure:
        emit_value(register)
        lifter.state.kill(dest_name)
        return
    guard, lifter.guard = lifter.guard, None
    try:
        value = lifter.tmp("b32")
        emit_value(value)
    finally:
        lifter.guard = guard
    lifter.emit("mov", ("b32",), (register, value))
    lifter.state.kill(dest_name)
    lifter.state.tags[dest_name] = ("g", value.name, None) + lifter.sass_guard


def write64(lifter, lo_name: str, hi_name: str, value: Register,
            low_kept: bool = False) -> None:
    """Write the 64-bit ``value`` into the SASS registers ``lo_name`` and ``hi_name``.

    ``low_kept``: ``lo_name`` already holds the low word of ``value`` (the high instruction
    of a carry chain completes a sum whose low word its low instruction wrote, and the chain
    is dropped when that register is rewritten in between), so the SASS register is not
    rewritten: snapshots of it taken since stay current. Under a guard too: a chain pairs
    only instructions under the same guard, so where it fails neither wrote the register."""
    if lo_name in _ZERO:
        return
    target = lifter.pair_reg(lo_name) if _is_next(lo_name, hi_name) else None
    guard = lifter.guard
    if target is None:
        name = lifter.pair_name(lo_name, hi_name) if guard is None else None
        target = Register(name) if name is not None else lifter.tmp("b64")
    elif guard is not None:
        # The write may not happen: the pair register must already hold the old pair.
        old = build64(lifter, Register(lo_name), Register(hi_name))
        if old != target:
            lifter.emit("mov", ("b64",), (target, old), guard=False)
    _keep_copies(lifter, target.name, (lo_name, hi_name))
    lifter.emit("mov", ("b64",), (target, value))
    lo, hi = lifter.reg(lo_name), lifter.reg(hi_name)
    lifter.emit("cvt", ("u32", "u64"), (lo, target))
    shifted = lifter.tmp("b64")
    lifter.emit("shr", ("u64",), (shifted, target, Immediate(32)))
    lifter.emit("cvt", ("u32", "u64"), (hi, shifted))
    state = lifter.state
    # What reads the low word (a compare whose `.EX` half comes later: `ISETP.LT.U32 P1,
    # R16, 0x80` between `IADD3 R16, P0, ...` and `IMAD.X R17, ..., P0`) stays valid when
    # the chain keeps it.
    # Facts about other registers that name the low word (`R3` holds `R16 << 2`) stay
    # true too.
    readers, facts = {}, {}
    if low_kept:
        readers = {k: v for k, v in state.pending.items() if k != lo_name and lo_name in v[-1]}
        facts = {k: v for k, v in state.tags.items() if k != lo_name and lo_name in v[1:]}
    state.kill(target.name)
    state.kill(lo_name)
    if low_kept:
        state.writes[lo_name] -= 1
    state.kill(hi_name)
    for k, v in readers.items():
        if k not in (hi_name, target.name) and hi_name not in v[-1] and (
                target.name not in v[-1]):
            state.pending[k] = v
    for k, v in facts.items():
        if k not in (hi_name, target.name) and hi_name not in v[1:] and (
                target.name not in v[1:]):
            state.tags[k] = v
    if guard is None:
        state.tags[lo_name] = ("v", target.name, "lo")
        state.tags[hi_name] = ("v", target.name, "hi")
    elif value.name.startswith("%"):
        # Whenever the same guard holds, the pair holds ``value`` (whatever register pair
        # or temporary carried it: the halves were written from it under that guard).
        state.tags[lo_name] = ("g", value.name, "lo") + lifter.sass_guard
        state.tags[hi_name] = ("g", value.name, "hi") + lifter.sass_guard


def _keep_copies(lifter, name: str, written: tuple[str, ...]) -> None:
    """Before the 64-bit register ``name`` is overwritten: registers other than ``written``
    that hold its halves (copies taken earlier, ``MOV R8, R12`` before ``R12:R13``
    advances) keep them through a copy of the old value, instead of losing the pairing."""
    tags = lifter.state.tags
    holders = [(register, fact) for register, fact in tags.items()
               if fact[0] == "v" and fact[1] == name and register not in written]
    if not holders:
        return
    old = lifter.tmp("b64")
    lifter.emit("mov", ("b64",), (old, Register(name)), guard=False)
    for register, fact in holders:
        tags[register] = ("v", old.name, fact[2])


def _is_next(lo: str, hi: str) -> bool:
    for prefix in ("UR", "R"):
        if lo.startswith(prefix) and hi.startswith(prefix):
            a, b = lo[len(prefix):], hi[len(prefix):]
            return a.isdigit() and b.isdigit() and int(b) == int(a) + 1 and int(a) % 2 == 0
    return False
