"""Carry chains of the SASS lifter: 64-bit sums and scaled sums computed in 32-bit halves.

``IADD3 lo, P, a0, a1, a2`` adds three words and writes the carries to ``P`` (and ``Q``);
``IADD3.X hi, b0, b1, b2, P`` or ``IMAD.X hi, x, y, b, P`` add the high words with those
carries. Together they compute ``sum(a) + 2**32 * sum(b)`` modulo 2**64, whatever word is
paired with whatever: the lifter emits that one 64-bit sum (:func:`carry_high`), pairing
high words with low words where the facts of :mod:`kernelcheck.sass.lift_state` say they
are two halves of one value, so a 64-bit parameter or a 64-bit register stays one term.

``LEA lo, P, a, b, s`` (``(a << s) + b``) and ``LEA.HI.X hi, a, b_hi, a_hi, s, P``
(``.SX32``: ``a_hi`` is the sign word of ``a``) compute ``((a_hi:a) << s) + (b_hi:b)``.
An ``LEA lo, P, a, b, s`` completed by ``IADD3.X`` or ``IMAD.X`` instead (ptxas computes
the bits shifted out of ``a`` apart, with ``SHF.L.U64.HI``) is the sum of the two low
words ``(a << s) mod 2**32`` and ``b`` and of the high instruction's words.

The low instruction's operands are copied (snapshots) when the chain begins, since the
low result often overwrites one of them (``IADD3 R2, P0, R2, ...``). A chain is read only
when every carry the low instruction may produce is passed on, both instructions are
unguarded and in the same block, and the registers it relies on are not rewritten in
between; otherwise the high word is opaque.
"""

from __future__ import annotations

from kernelcheck.ir.nodes import Immediate, ModifiedOperand, NegatedPredicate, Register
from kernelcheck.sass.lift_memory import opaque_instruction
from kernelcheck.sass.lift_state import is_predicate
from kernelcheck.sass.lift_values import (
    build64,
    cbank_offset,
    is_zero,
    opaque_pred,
    pair64,
    plain,
    src32,
    write32,
    write64,
)

__all__ = ["Snap", "holds_snapshot", "snap", "snap_value", "start_chain", "carry_high", "lea",
           "negation"]


def _opaque_preds(lifter, names) -> None:
    for name in names:
        if name not in ("PT", "UPT"):
            opaque_pred(lifter, lifter.reg(name))
            lifter.state.kill(name)


def _split_predicates(operands):
    first, rest = operands[0], list(operands[1:])
    preds = []
    while rest and type(rest[0]) is Register and is_predicate(rest[0].name):
        preds.append(rest.pop(0).name)
    return first, preds, rest


class Snap:
    """A low-word operand of a carry chain as it was when the chain began: its value
    copied into a virtual register, the SASS register it came from, its fact and its
    negation modifier."""

    __slots__ = ("operand", "value", "name", "fact", "modifier", "version", "source_version")

    def __init__(self, operand, value, name, fact, modifier, version, source_version=0):
        self.operand, self.value, self.name = operand, value, name
        self.fact, self.modifier, self.version = fact, modifier, version
        #: For a fact ``("shl", source, n)``: the write count of ``source`` then.
        self.source_version = source_version

    def unchanged(self, lifter) -> bool:
        """Whether the SASS register still holds the snapshot's value."""
        return self.name is not None and lifter.state.writes.get(self.name, 0) == (
            self.version)


def holds_snapshot(lifter, snapshot: Snap, register: Register) -> bool:
    """Whether the SASS ``register`` holds the snapshot's value now: the snapshot's own
    register, unchanged, or a copy of it (``MOV R8, R4``: the fact ``("eq", "R4")``), or a
    register with the same value-naming fact as it (the same half of one 64-bit value,
    the same constant-bank word, constant or special register)."""
    if snapshot.name is None or not snapshot.unchanged(lifter):
        return False
    if register.name == snapshot.name:
        return True
    tags = lifter.state.tags
    fact, own = tags.get(register.name), tags.get(snapshot.name)
    if fact == ("eq", snapshot.name) or own == ("eq", register.name):
        return True
    return fact is not None and fact == own and fact[0] in ("v", "cb", "k", "sr", "pl")


def snap(lifter, operand) -> Snap:
    modifier = negation(operand)
    inner = operand.operand if type(operand) is ModifiedOperand and modifier in (
        "neg", "inv") else operand
    inner_p = plain(inner)
    name, fact, value = None, None, inner
    if type(inner_p) is Register and not is_zero(inner_p) and not inner_p.name.startswith("%"):
        name = inner_p.name
        fact = lifter.state.tags.get(name)
        value = lifter.tmp("b32")
        lifter.emit("mov", ("b32",), (value, src32(lifter, inner_p)), guard=False)
    source_version = lifter.state.writes.get(fact[1], 0) if fact and fact[0] == "shl" else 0
    return Snap(operand, value, name, fact, modifier,
                 lifter.state.writes.get(name, 0) if name else 0, source_version)


def snap_value(lifter, snap: Snap):
    if snap.modifier == "neg":
        return src32(lifter, ModifiedOperand(snap.value, negate=True))
    if snap.modifier == "inv":
        return src32(lifter, ModifiedOperand(snap.value, invert=True))
    if snap.modifier is not None:
        return src32(lifter, snap.operand)
    return src32(lifter, snap.value)


def start_chain(lifter, preds, info) -> None:
    """Record the carries of a low-word instruction. A guarded chain (both instructions
    under the same predicate, as if-converted code has it) is read under that guard; it
    is dropped when the predicate is rewritten in between.

    The chain's value does not depend on the low word's register (it is read from the
    snapshots), so a chain whose low result is rewritten before the high instruction still
    completes: the high word then pairs with the copies of the low word (:func:`_complete`).
    """
    carries = tuple(p for p in preds if p not in ("PT", "UPT"))
    _opaque_preds(lifter, carries)
    if not carries:
        return
    low = info[-1]
    depends = []
    if lifter.sass_guard:
        depends.append(lifter.sass_guard[0])
    for snap in _snaps_of(info):
        if snap.fact and snap.fact[0] == "v":
            depends.append(snap.fact[1])
    for k, name in enumerate(carries):
        lifter.state.pending[name] = ("carry", info, carries, k, lifter.sass_guard,
                                      lifter.state.writes.get(low, 0), tuple(depends))
    lo = low if lifter.guard is None else None
    if lo is not None and lo not in ("RZ", "URZ") and lo not in lifter.state.tags:
        # The low word of a sum whose high word comes later: a copy of it taken before
        # then is the low word of the 64-bit value the chain completes to.
        lifter.state.tags[lo] = ("pl", lo, lifter.state.writes.get(lo, 0))


def _snaps_of(info):
    if info[0] == "add":
        return info[1]
    return (info[1], info[2])  # lea: a, b


def _carry_inputs(rest) -> tuple[str, ...] | None:
    """The carry predicates an ``.X`` instruction reads (None when one is unreadable)."""
    names = []
    for operand in rest:
        if type(operand) is NegatedPredicate and operand.register.name in ("PT", "UPT"):
            continue
        if type(operand) is Register and is_predicate(operand.name):
            if operand.name in ("PT", "UPT"):
                return None  # a constant carry of 1
            names.append(operand.name)
            continue
        return None
    return tuple(names)


def _chain_of(lifter, carries):
    """The chain whose carries ``carries`` are, and the write count of its low word's
    register when the chain began; (None, 0) when there is none."""
    if not carries:
        return None, 0
    found = lifter.state.pending.get(carries[0])
    if found is None or found[0] != "carry":
        return None, 0
    _, info, produced, _, guard, version, _ = found
    if tuple(carries) != produced or guard != lifter.sass_guard:
        return None, 0
    if any(lifter.state.pending.get(p, (None, None))[1] is not info for p in carries):
        return None, 0
    return info, version


def _constant_carries(rest) -> int | None:
    """The sum of an ``.X`` instruction's carry inputs when every one is a constant
    predicate (``PT`` adds 1, ``!PT`` adds 0); None when one is a real predicate or
    anything else."""
    if not rest:
        return None
    ones = 0
    for operand in rest:
        if type(operand) is NegatedPredicate and operand.register.name in ("PT", "UPT"):
            continue
        if type(operand) is Register and operand.name in ("PT", "UPT"):
            ones += 1
            continue
        return None
    return ones


def _constant_carry_sum(lifter, instr, dest: Register, hi_items, ones: int) -> None:
    """``IADD3.X d, a, b, c, !PT, PT`` or ``IMAD.X d, a, b, c, PT``: no carry chain, the
    carry inputs are constants, so the result is the 32-bit sum of the words (a product
    for ``IMAD.X``) plus the number of ``PT`` inputs; ptxas writes ``a + b + 1`` this way.
    Carry-out predicates it writes become opaque."""
    _opaque_preds(lifter, _split_predicates(instr.operands)[1])
    values = []
    for item in hi_items:
        if type(item) is tuple:  # IMAD.X product a*b
            _, a, b = item
            if is_zero(a) or is_zero(b):
                continue
            if _is_one(a) or _is_one(b):
                values.append(src32(lifter, b if _is_one(a) else a))
                continue
            product = lifter.tmp("b32")
            lifter.emit("mul", ("lo", "s32"), (product, src32(lifter, a), src32(lifter, b)),
                        guard=False)
            values.append(product)
        elif not is_zero(item):
            values.append(src32(lifter, item))
    if ones:
        values.append(Immediate(ones))
    if not values:
        values.append(Immediate(0))

    def emit(r):
        total = values[0]
        for value in values[1:-1]:
            partial = lifter.tmp("b32")
            lifter.emit("add", ("s32",), (partial, total, value), guard=False)
            total = partial
        if len(values) == 1:
            lifter.emit("mov", ("b32",), (r, total))
        else:
            lifter.emit("add", ("s32",), (r, total, values[-1]))

    write32(lifter, dest.name, emit)


def carry_high(lifter, instr, dest: Register, hi_items, rest):
    """The high word of a 64-bit sum (``IADD3.X``/``IMAD.X``) whose low word began a carry
    chain: lifted as one 64-bit sum when the chain is recognised, as a 32-bit sum when
    every carry input is a constant predicate, else opaque. The carries it produces itself
    (the middle word of a longer sum: ``IADD3.X R57, P1, R57, R2, RZ, P3, !PT``) are
    opaque."""
    ones = _constant_carries(rest)
    if ones is not None:
        return _constant_carry_sum(lifter, instr, dest, hi_items, ones)
    carries = _carry_inputs(rest)
    info, version = _chain_of(lifter, carries) if carries is not None else (None, 0)
    total = None
    if info is not None and info[0] == "add":
        total = _sum64(lifter, list(info[1]), hi_items, len(carries))
    elif info is not None and info[0] == "lea":
        # LEA lo, P, a, b, s then IADD3.X hi, ..., P: the low words added were the 32-bit
        # (a << s) and b; the high instruction adds its own words (ptxas puts the bits
        # shifted out of a there) and the carry.
        total = _sum64(lifter, [_shifted(lifter, info[1], info[3]), info[2]], hi_items,
                       len(carries))
    if total is None or info[-1] in ("RZ", "URZ"):
        return opaque_instruction(lifter, instr)
    _complete(lifter, info[-1], dest.name, total, version)
    _opaque_preds(lifter, _split_predicates(instr.operands)[1])


def _shifted(lifter, a: Snap, shift: int) -> Snap:
    """The low word ``(a << shift) mod 2**32`` of a ``LEA`` as a chain operand of its own
    (no register holds it, so it pairs with no high word)."""
    value = lifter.tmp("b32")
    lifter.emit("shl", ("b32",), (value, snap_value(lifter, a), Immediate(shift)),
                guard=False)
    return Snap(value, value, None, None, None, 0)


def _complete(lifter, lo: str, hi: str, total: Register, version: int) -> None:
    """Write the completed 64-bit sum ``total`` of a chain whose low instruction wrote
    ``lo`` (``version``: its write count then) and whose high instruction writes ``hi``.

    When ``lo`` still holds the low word, the pair ``lo:hi`` is the 64-bit value. When it
    was rewritten in between (``LEA R6, P4, ...`` then ``IADD3 R6, P0, R6, 0x8, RZ``
    before ``LEA.HI.X R16, ...``), only ``hi`` is written: it holds the high word of
    ``total``, and the copies of the low word taken from ``lo`` before it was rewritten
    (which carry the fact ``("pl", lo, version)``) pair with it."""
    key = ("done", lo, version)
    if lifter.state.writes.get(lo, 0) == version:
        # Registers that copied the low word in between (``STL [R1], R6`` of a spill
        # slot, ``MOV R8, R6``) hold the low word of ``total`` too.
        pending_low = ("pl", lo, version)
        copies = [name for name, fact in lifter.state.tags.items()
                  if fact == pending_low and name != lo] if lifter.guard is None else []
        write64(lifter, lo, hi, total, low_kept=True)
        done = lifter.state.tags.get(lo)
        if done and done[0] == "v":
            for name in copies:
                lifter.state.tags[name] = done
    else:
        high = lifter.tmp("b64")
        lifter.emit("shr", ("u64",), (high, total, Immediate(32)), guard=False)
        write32(lifter, hi, lambda r: lifter.emit("cvt", ("u32", "u64"), (r, high)))
        done = None
        if lifter.guard is None and not is_zero(Register(hi)):
            lifter.state.tags[hi] = ("v", total.name, "hi")
            done = ("v", total.name, "hi")
    if done and done[0] == "v":
        # Completed: copies of the low word taken in between pair with the new high word
        # (read by build64); forgotten when the 64-bit register is rewritten.
        lifter.state.pending[key] = ("done", done[1], (done[1],))


def _sum64(lifter, lo_items, hi_items, carries: int):
    """``sum(lo) + 2**32 * sum(hi)`` as one 64-bit register, pairing each high word with
    its low word where the facts allow; None when the chain cannot be read exactly.

    Exactness: the low instruction passes on ``carries`` carry bits, enough for the sum
    of ``carries + 1`` words; a negated low word ``-x`` (added as ``~x + 1``) is read
    only together with the inverted high word ``~y`` of the same value, the 64-bit
    ``-(y:x)``.
    """
    lo_items = [s for s in lo_items if not is_zero(s.operand)]
    if len(lo_items) > carries + 1:
        return None  # more carries possible than the chain passes on
    his = []
    for item in hi_items:
        if type(item) is tuple:  # IMAD.X product a*b
            _, a, b = item
            if is_zero(a) or is_zero(b):
                continue
            if _is_one(a) or _is_one(b):
                # IMAD.X d, x, 0x1, y: the high word x itself, so it can pair with its
                # low word (an unrolled pointer chain advanced by IMAD.X).
                his.append(b if _is_one(a) else a)
                continue
            product = lifter.tmp("b32")
            lifter.emit("mul", ("lo", "s32"), (product, src32(lifter, a), src32(lifter, b)),
                        guard=False)
            his.append(product)
        elif not is_zero(item):
            his.append(item)
    terms = []
    free_lo = list(lo_items)
    for hi in list(his):
        match = next((lo for lo in free_lo if _pairs(lifter, lo, hi)), None)
        if match is None:
            continue
        free_lo.remove(match)
        his.remove(hi)
        hi_mod = negation(hi)
        if match.modifier == "neg" and hi_mod == "inv":
            inner = build64(lifter, match.value, hi.operand, match.fact, match.name,
                            match.unchanged(lifter))
            neg = lifter.tmp("b64")
            lifter.emit("neg", ("s64",), (neg, inner), guard=False)
            terms.append(neg)
        elif match.modifier is None and hi_mod is None:
            terms.append(build64(lifter, match.value, hi, match.fact, match.name,
                                 match.unchanged(lifter)))
        else:
            return None
    for lo in free_lo:
        if lo.modifier is not None:
            return None
        terms.append(build64(lifter, lo.value, Immediate(0), lo.fact, lo.name))
    for hi in his:
        wide = lifter.tmp("b64")
        lifter.emit("cvt", ("u64", "u32"), (wide, src32(lifter, hi)), guard=False)
        shifted = lifter.tmp("b64")
        lifter.emit("shl", ("b64",), (shifted, wide, Immediate(32)), guard=False)
        terms.append(shifted)
    if not terms:
        terms.append(pair64(lifter, Immediate(0)))
    total = terms[0]
    for term in terms[1:]:
        acc = lifter.tmp("b64")
        lifter.emit("add", ("s64",), (acc, total, term), guard=False)
        total = acc
    return total


def _is_one(operand) -> bool:
    operand = plain(operand)
    return type(operand) is Immediate and operand.kind == "int" and operand.value == 1


def negation(operand):
    if type(operand) is ModifiedOperand:
        if operand.negate and not operand.invert and not operand.absolute:
            return "neg"
        if operand.invert and not operand.negate and not operand.absolute:
            return "inv"
        if not (operand.negate or operand.invert or operand.absolute) and plain(operand):
            return None
        return "other"
    return None


def _pairs(lifter, lo: Snap, hi) -> bool:
    """Whether ``hi`` is naturally the high word of the snapshot ``lo`` (same 64-bit
    value, sign word, adjacent constant words, or an aligned register pair)."""
    if type(hi) is ModifiedOperand and negation(hi) in ("neg", "inv"):
        hi = hi.operand
    if type(hi) is Register and hi.name.startswith("%"):
        return False
    hi_p = plain(hi)
    if hi_p is None:
        return False
    tags = lifter.state.tags
    a = lo.fact
    b = tags.get(hi_p.name) if type(hi_p) is Register else None
    if lo.name is not None and type(hi_p) is Register:
        if a and b and a[0] == b[0] == "v" and a[1] == b[1]:
            return True
        if b == ("sx", lo.name) and lo.unchanged(lifter):
            return True
        if a and b and a[0] == "pl" and b[0] == "v" and b[2] == "hi":
            # A copy of a chain's low word and the high word of the sum it completed to.
            done = lifter.state.pending.get(("done",) + a[1:])
            if done is not None and done[1] == b[1]:
                return True
        if a and b and a[0] == b[0] == "cb" and b[1] == a[1] + 4:
            return True
        prefix = "UR" if lo.name.startswith("UR") else "R"
        if lo.name.startswith(prefix) and hi_p.name.startswith(prefix):
            x, y = lo.name[len(prefix):], hi_p.name[len(prefix):]
            return x.isdigit() and y.isdigit() and int(x) % 2 == 0 and int(y) == int(x) + 1
        return False
    lo_cb = cbank_offset(lifter, lo.value) if lo.name is None else (
        a[1] if a and a[0] == "cb" else None)
    hi_cb = cbank_offset(lifter, hi_p)
    if hi_cb is None and b and b[0] == "cb":
        hi_cb = b[1]
    return lo_cb is not None and hi_cb == lo_cb + 4


def lea(lifter, instr):
    mods = instr.modifiers
    dest, preds, rest = _split_predicates(instr.operands)
    if type(dest) is not Register:
        return opaque_instruction(lifter, instr)
    if "HI" in mods and "X" in mods:
        return lea_high(lifter, instr, dest, rest)
    if "HI" in mods:
        # LEA.HI d, a, b, c, s: the high word of (c:a) << s plus b; exact when c is zero.
        if len(rest) >= 4 and is_zero(rest[2]) and "SX32" not in mods and (
                type(plain(rest[3])) is Immediate):
            shift = plain(rest[3]).value
            x, y = src32(lifter, rest[0]), src32(lifter, rest[1])
            part = lifter.tmp("b32")
            lifter.emit("shr", ("u32",), (part, x, Immediate(32 - shift)), guard=False)
            write32(lifter, dest.name, lambda r: lifter.emit("add", ("s32",), (r, part, y)))
            return _opaque_preds(lifter, preds)
        return opaque_instruction(lifter, instr)
    if len(rest) < 3 or type(plain(rest[2])) is not Immediate:
        return opaque_instruction(lifter, instr)
    a, b, s = rest[0], rest[1], plain(rest[2]).value
    # Under a guard the chain pairs only with a high instruction under the same guard
    # (if-converted code: `@P0 LEA R14, P5, ...` then `@P0 LEA.HI.X R15, ..., P5`).
    chained = any(p not in ("PT", "UPT") for p in preds)
    if chained:
        a_snap, b_snap = snap(lifter, a), snap(lifter, b)
        if a_snap.modifier is not None or b_snap.modifier is not None:
            chained = False
    x = snap_value(lifter, a_snap) if chained else src32(lifter, a)
    y = snap_value(lifter, b_snap) if chained else src32(lifter, b)
    shifted = lifter.tmp("b32")
    lifter.emit("shl", ("b32",), (shifted, x, Immediate(s)), guard=False)
    write32(lifter, dest.name, lambda r: lifter.emit("add", ("s32",), (r, shifted, y)))
    if not chained:
        return _opaque_preds(lifter, preds)
    start_chain(lifter, preds, ("lea", a_snap, b_snap, s, dest.name))


def lea_high(lifter, instr, dest: Register, rest):
    sx = "SX32" in instr.modifiers
    # LEA.HI.X d, a, b_hi, a_hi, s, P   /   LEA.HI.X.SX32 d, a, b_hi, s, P
    need = 4 if sx else 5
    if len(rest) < need:
        return opaque_instruction(lifter, instr)
    a, b_hi = rest[0], rest[1]
    a_hi = None if sx else rest[2]
    s_op = plain(rest[2 if sx else 3])
    carries = _carry_inputs(rest[need - 1:])
    info, version = _chain_of(lifter, carries) if carries else (None, 0)
    a_p = plain(a)
    if info is not None and info[0] == "add" and sx and type(s_op) is Immediate and (
            0 <= s_op.value < 32) and type(a_p) is Register:
        return _sign_extended_sum(lifter, instr, dest, info, a_p, b_hi, s_op.value, carries,
                                  version)
    if info is None or info[0] != "lea" or type(s_op) is not Immediate or (
            info[3] != s_op.value) or type(a_p) is not Register or (
            not holds_snapshot(lifter, info[1], a_p)) or (
            info[4] in ("RZ", "URZ")):
        return opaque_instruction(lifter, instr)
    a_snap, b_snap = info[1], info[2]
    if sx:
        wide = lifter.tmp("b64")
        lifter.emit("cvt", ("s64", "s32"), (wide, src32(lifter, a_snap.value)), guard=False)
    else:
        wide = build64(lifter, a_snap.value, a_hi, a_snap.fact, a_snap.name, True)
    shifted = lifter.tmp("b64")
    lifter.emit("shl", ("b64",), (shifted, wide, Immediate(s_op.value)), guard=False)
    base = build64(lifter, b_snap.value, b_hi, b_snap.fact, b_snap.name,
                   b_snap.unchanged(lifter))
    total = lifter.tmp("b64")
    lifter.emit("add", ("s64",), (total, shifted, base), guard=False)
    _complete(lifter, info[4], dest.name, total, version)


def _sign_extended_sum(lifter, instr, dest: Register, info, a_p: Register, b_hi, shift: int,
                       carries, version: int):
    """``IADD3 lo, P, x, b, RZ`` then ``LEA.HI.X.SX32 hi, a, b_hi, s, P``: the 64-bit
    ``(sext(a) << s) + (b_hi:b)`` when ``x`` is the low word of ``sext(a) << s``. Exact: the
    high instruction adds ``hi32(sext(a) << s)``, plus ``b_hi`` and the carry of the low
    32-bit sum.

    * ``x`` is ``a`` itself with ``s`` 0 or 1: ``hi32(sext(a) << s)`` is then the sign word
      of ``a``, and the sum is ``sext(a) + (b_hi:b)``: how compilers add a signed 32-bit
      byte index to a pointer (``p[i]`` for a ``char``);
    * ``x`` holds ``a << s`` (the fact ``("shl", a, s)``, ``a`` unchanged since): ptxas's
      ``SHF.R.S64 x, RZ, 32 - s, a`` before the sum, ``p[i]`` for elements of ``2**s``
      bytes."""
    lo_items = [s for s in info[1] if not is_zero(s.operand)]
    a_item = next((s for s in lo_items if holds_snapshot(lifter, s, a_p)), None) if (
        shift in (0, 1)) else None
    scaled = None
    if a_item is None and shift > 0:
        scaled = next((s for s in lo_items if s.fact == ("shl", a_p.name, shift) and
                       s.source_version == lifter.state.writes.get(a_p.name, 0)), None)
    item = a_item or scaled
    if (len(carries) != 1 or len(lo_items) != 2 or item is None or
            any(s.modifier is not None for s in lo_items) or info[2] in ("RZ", "URZ")):
        return opaque_instruction(lifter, instr)
    b_item = next(s for s in lo_items if s is not item)
    wide = lifter.tmp("b64")
    if a_item is not None:
        lifter.emit("cvt", ("s64", "s32"), (wide, src32(lifter, a_item.value)), guard=False)
    else:
        extended = lifter.tmp("b64")
        lifter.emit("cvt", ("s64", "s32"), (extended, src32(lifter, a_p)), guard=False)
        lifter.emit("shl", ("b64",), (wide, extended, Immediate(shift)), guard=False)
    base = build64(lifter, b_item.value, b_hi, b_item.fact, b_item.name,
                   b_item.unchanged(lifter))
    total = lifter.tmp("b64")
    lifter.emit("add", ("s64",), (total, wide, base), guard=False)
    _complete(lifter, info[2], dest.name, total, version)
