"""Recognise ptxas's expansion of 32-bit integer division by a runtime value.

SASS has no integer divide. For PTX ``div.u32 q, x, d`` / ``rem.u32 r, x, d`` ptxas emits a
reciprocal estimate and a correction (the listing below is the sm_90 form; the scheduler
interleaves other instructions, and the operands of the commutative steps may be swapped)::

    I2F.U32.RP f, d                 ; float(d), rounded up
    MUFU.RCP f, f                   ; about 1/float(d)
    IADD3 t, f, 0xffffffe, RZ       ; the bits of f plus 0x0ffffffe: f * 2**32, a little less
    F2I.FTZ.U32.TRUNC.NTZ z, t      ; z <= 2**32 / d, an integer estimate of the reciprocal
    IADD3 nz, RZ, -z, RZ            ; -z            (or m = -d * z)
    IMAD m, nz, d, RZ               ; -z * d mod 2**32
    IMAD.HI.U32 z2, z, m, P         ; z + umulhi(z, m): the pair P:P+1 holds 0 and z
    IMAD.HI.U32 q, z2, x, RZ        ; q0 = umulhi(z2, x)
    IADD3 nq, -q, RZ, RZ
    IMAD r, nq, d, x                ; r0 = x - q0 * d
    ISETP.GE.U32.AND P0, PT, r, d, PT
    @P0 IADD3 r, r, -d, RZ          ; one correction: r1, q1
    @P0 IADD3 q, q, 0x1, RZ
    ISETP.GE.U32.AND P1, PT, r, d, PT
    @P1 IADD3 q, q, 0x1, RZ         ; a second: q2 (r2 when the remainder is wanted)
    @!P2 LOP3.LUT q, RZ, d, RZ, 0x33, !PT   ; d == 0 (P2 = d != 0): q = ~d

``div.s32``/``rem.s32`` divide the absolute values (``IABS``; ``I2F.RP`` or
``I2F.U32.RP`` converts ``|d|``), then negate the quotient when ``x ^ d`` is negative
(``LOP3.LUT s, x, d, RZ, 0x3c``, ``ISETP.GE.AND P, PT, s, RZ``) and the remainder when
``x`` is negative.

Soundness. The estimate is a lower bound: ``z2 <= 2**32 / d``, so ``q0 <= x / d``, and a
correction adds 1 only when ``r_k = x - q_k*d >= d``, that is when ``q_k + 1 <= x / d``:
every ``q_k`` is in ``[0, floor(x / d)]``. That two corrections reach ``floor(x / d)``
exactly is the accuracy of the estimate, which NVIDIA guarantees by emitting exactly this
sequence for PTX's ``div.u32``: the sequence computes the PTX instruction it expands. The
matcher therefore maps the value after the second correction back to that instruction,
``div.u32 q, x, d`` (``rem.u32``, and the signed forms after their sign corrections), and
nothing else: every step is checked (opcode, modifiers, the constants 0x0ffffffe, 0x33,
0x3c, and which value each operand holds), a step under a guard is accepted only where
the sequence has one, and a sequence that deviates anywhere leaves the values as the
lifter computes them (the estimate opaque). For ``d == 0`` the sequence gives ``~0``
(``~d``) and ``div.u32`` is unspecified; the analysis gives no bound to a quotient whose
divisor may be 0 (:mod:`kernelcheck.launch.evaluate`, ``DIV``), so no value is assumed.

The matcher works inside one basic block (the sequence is straight-line, its corrections
if-converted) with an abstract value per register: where each operand came from, by
identity. :func:`plan_divisions` says, for the lifter, where to copy ``x`` and ``d`` while
they are live, and after which instruction a register holds the quotient or remainder.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kernelcheck.ir.nodes import (
    ConstantRef,
    Immediate,
    Instruction,
    ModifiedOperand,
    Register,
    SpecialRegister,
)
from kernelcheck.ir.operands import defs
from kernelcheck.sass.lift_state import STABLE_SPECIALS

__all__ = ["DivisionPlan", "plan_divisions"]

_RECIPROCAL_BIAS = 0x0FFFFFFE


@dataclass
class DivisionPlan:
    """What the lifter emits for the divisions recognised in one block.

    ``copies[k]``: ``(operand position, name)`` pairs: before instruction ``k`` (its index
    in the function), copy the 32-bit value of that operand into the virtual register
    ``name``. ``results[k]``: ``(register, opcode, type, x name, d name)``: after instruction
    ``k``, the SASS register holds ``opcode.type x, d`` (``div``/``rem``, ``u32``/``s32``)
    of the copies.
    """

    copies: dict[int, list[tuple[int, str]]] = field(default_factory=dict)
    results: dict[int, list[tuple[str, str, str, str, str]]] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.results)


_ZERO = ("imm", 0)
#: Values the matcher does not look into: a register's value at entry, a constant-bank
#: word, a special register, an immediate.
_LEAVES = frozenset({"in", "cb", "sr", "imm"})


class _Matcher:
    def __init__(self, known: dict[str, tuple] | None = None):
        #: What registers hold at the block's entry, where the lifter knows it (a constant
        #: bank word, a special register, a constant): two registers holding one of these
        #: hold the same value.
        self.known = known or {}
        self.val: dict[str, tuple] = {}
        self.pred: dict[str, tuple] = {}
        self.version: dict[str, int] = {}
        #: Where each leaf value was first read: (instruction index, operand position).
        self.where: dict[tuple, tuple[int, int]] = {}
        self.plan = DivisionPlan()

    # ------------------------------------------------------------------ values
    def desc(self, instr: Instruction, position: int):
        """The abstract value of operand ``position`` of ``instr``."""
        operand = instr.operands[position] if position < len(instr.operands) else None
        value = self._desc(operand)
        if value is not None and value[0] in _LEAVES and value not in self.where:
            self.where[value] = (instr.index, position)
        return value

    def _desc(self, operand):
        kind = type(operand)
        if kind is ModifiedOperand:
            if operand.absolute or any(s != "reuse" for s in operand.suffixes):
                return None
            inner = self._desc(operand.operand)
            if inner is None:
                return None
            if operand.negate and not operand.invert:
                return _neg(inner)
            if operand.invert or operand.negate:
                return None
            return inner
        if kind is Register:
            if operand.name in ("RZ", "URZ"):
                return _ZERO
            found = self.val.get(operand.name)
            if found is None:
                version = self.version.get(operand.name, 0)
                found = self.known.get(operand.name) if version == 0 else None
                if found is None:
                    found = ("in", operand.name, version)
            return found
        if kind is Immediate:
            return ("imm", operand.value & 0xFFFFFFFF) if operand.kind == "int" else None
        if kind is ConstantRef and type(operand.bank) is int and operand.static_offset is not None:
            return ("cb", operand.bank, operand.static_offset)
        return None

    def pair_low_high(self, operand):
        """The values of the register pair ``operand:operand+1`` (``RZ``: both zero)."""
        if type(operand) is ModifiedOperand:
            if operand.negate or operand.invert or operand.absolute or any(
                    s != "reuse" for s in operand.suffixes):
                return None
            operand = operand.operand
        if type(operand) is not Register:
            return None
        if operand.name in ("RZ", "URZ"):
            return _ZERO, _ZERO
        prefix = "UR" if operand.name.startswith("UR") else "R"
        digits = operand.name[len(prefix):]
        if not digits.isdigit():
            return None
        high = Register(f"{prefix}{int(digits) + 1}")
        return self._desc(operand), self._desc(high)

    def kill(self, instr: Instruction) -> None:
        for name in defs(instr):
            self.version[name] = self.version.get(name, 0) + 1
            self.val.pop(name, None)
            self.pred.pop(name, None)

    def set(self, name: str, value) -> None:
        if name not in ("RZ", "URZ") and value is not None:
            self.val[name] = value

    # ------------------------------------------------------------------ one instruction
    def step(self, instr: Instruction) -> None:
        names = defs(instr)
        old = {name: self._desc(Register(name)) for name in names}
        reads = [self.desc(instr, k) for k in range(len(instr.operands))]
        guard = instr.guard
        if guard is not None and guard.register in ("PT", "UPT") and not guard.negated:
            guard = None
        dest = instr.operands[0].name if instr.operands and type(
            instr.operands[0]) is Register else None
        result = None
        if dest is not None and names and names[0] == dest:
            if guard is None:
                result = self._unguarded(instr, reads, dest)
            else:
                result = self._guarded(instr, reads, guard, dest, old[dest])
        self.kill(instr)
        if result is None:
            return
        kind, target, value = result
        if kind == "pred":
            self.pred[target] = value
            return
        self.set(target, value)
        if instr.opcode == "CS2R":
            self.set(_next_register(target), value)
        self._record(instr, target, value)

    def _record(self, instr: Instruction, target: str, value) -> None:
        final = _final(value)
        if final is None:
            return
        op, kind, x, d = final
        xs, ds = self._copy(x), self._copy(d)
        if xs is None or ds is None:
            return
        self.plan.results.setdefault(instr.index, []).append((target, op, kind, xs, ds))

    def _copy(self, leaf) -> str | None:
        where = self.where.get(leaf)
        if where is None:
            return None
        index, position = where
        name = f"%dv{index}_{position}"
        copies = self.plan.copies.setdefault(index, [])
        if (position, name) not in copies:
            copies.append((position, name))
        return name

    def _unguarded(self, instr: Instruction, reads: list, dest: str):
        op, mods = instr.opcode, instr.modifiers
        count = len(reads)
        if op == "IABS" and count == 2 and reads[1] is not None:
            return "reg", dest, ("abs", reads[1])
        if op in ("MOV", "UMOV", "LDC", "ULDC") and count == 2 and not mods:
            return "reg", dest, reads[1]
        if op in ("S2R", "S2UR") and count == 2 and type(instr.operands[1]) is SpecialRegister \
                and instr.operands[1].name in STABLE_SPECIALS:
            return "reg", dest, ("sr", instr.operands[1].name)
        if op == "IMAD" and "MOV" in mods and count == 4 and reads[1] == _ZERO and (
                reads[2] == _ZERO):
            return "reg", dest, reads[3]
        if op == "HFMA2" and count == 5 and _zero_halves(instr):
            return "reg", dest, _ZERO
        if op == "CS2R" and count == 2 and getattr(instr.operands[1], "name", None) == (
                "SRZ") and "32" not in mods:
            return "reg", dest, _ZERO
        if op == "I2F" and count == 2 and reads[1] is not None:
            # The divisor of div.s32 is |d| (IABS), converted as signed or as unsigned.
            kind = "s" if reads[1][0] == "abs" else "u"
            if set(mods) == {"U32", "RP"} or set(mods) == {"RP"} and kind == "s":
                return "reg", dest, ("f0", kind, reads[1])
            return None
        if op == "MUFU" and mods == ("RCP",) and count == 2 and _is(reads[1], "f0"):
            return "reg", dest, ("f1",) + reads[1][1:]
        if op in ("IADD3", "VIADD") and not mods and count == (4 if op == "IADD3" else 3):
            terms = _sum_of(reads[1:])
            if terms is None:
                return None
            f1 = next((t for t in terms if _is(t, "f1")), None)
            if f1 is not None and sorted(terms, key=repr) == sorted(
                    [f1, ("imm", _RECIPROCAL_BIAS)], key=repr):
                return "reg", dest, ("f2",) + f1[1:]
            if len(terms) == 1:
                return "reg", dest, terms[0]
            return None
        if op == "F2I" and set(mods) == {"FTZ", "U32", "TRUNC", "NTZ"} and count == 2 and (
                _is(reads[1], "f2")):
            return "reg", dest, ("z",) + reads[1][1:]
        if op == "IMAD" and not mods and count == 4:
            return self._imad(dest, reads)
        if op == "IMAD" and mods == ("HI", "U32") and count == 4:
            return self._imad_hi(dest, reads, instr.operands[3])
        if op == "ISETP":
            return self._isetp(instr, reads, dest)
        if op == "LOP3" and mods == ("LUT",) and count == 6 and reads[3] == _ZERO and (
                reads[4] == ("imm", 0x3C)) and reads[1] is not None and reads[2] is not None:
            return "reg", dest, ("xor", frozenset((reads[1], reads[2])))
        return None

    @staticmethod
    def _imad(dest: str, reads: list):
        a, b, c = reads[1:4]
        for f, other in ((a, b), (b, a)):
            if f is None or other is None:
                continue
            if c == _ZERO and f[0] == "neg" and _is(f[1], "z") and other == f[1][2]:
                return "reg", dest, ("m",) + f[1][1:]
            if c == _ZERO and _is(f, "z") and other == _neg(f[2]):
                return "reg", dest, ("m",) + f[1:]
            if f[0] == "neg" and _is(f[1], "q"):
                kind, k, x, d = f[1][1:]
                if other == d and c == x and k == 0:
                    return "reg", dest, ("r", kind, 0, x, d)
            if _is(f, "q") and f[2] == 0 and other == _neg(f[4]) and c == f[3]:
                return "reg", dest, ("r", f[1], 0, f[3], f[4])  # q0 * -d + x
            # x - q*d of a finished quotient q is the remainder (C's truncated division:
            # x == (x / d) * d + x % d), as ``-q * d + x`` or ``q * -d + x``.
            final = _final(f[1]) if f[0] == "neg" else None
            if final is not None and final[0] == "div" and other == final[3] and (
                    c == final[2]):
                return "reg", dest, ("rem", final[1], final[2], final[3])
            final = _final(f)
            if final is not None and final[0] == "div" and other == _neg(final[3]) and (
                    c == final[2]):
                return "reg", dest, ("rem", final[1], final[2], final[3])
        return None

    def _imad_hi(self, dest: str, reads: list, addend):
        a, b = reads[1], reads[2]
        pair = self.pair_low_high(addend)
        for f, other in ((a, b), (b, a)):
            if _is(f, "z") and _is(other, "m") and f[1:] == other[1:] and pair == (_ZERO, f):
                return "reg", dest, ("inv",) + f[1:]
            if _is(f, "inv") and other is not None and pair == (_ZERO, _ZERO):
                return "reg", dest, ("q", f[1], 0, other, f[2])
        return None

    @staticmethod
    def _isetp(instr: Instruction, reads: list, dest: str):
        mods = set(instr.modifiers)
        ops = instr.operands
        if len(ops) != 5 or type(ops[4]) is not Register or ops[4].name not in ("PT", "UPT"):
            return None
        a, b = reads[2], reads[3]
        if mods == {"GE", "U32", "AND"} and _is(a, "r") and b == a[4]:
            return "pred", dest, ("ge",) + a[1:]
        if mods == {"GT", "U32", "AND"} and _is(b, "r") and a == b[4]:
            return "pred", dest, ("lt",) + b[1:]
        if mods in ({"NE", "U32", "AND"}, {"NE", "AND"}):
            d = b if a == _ZERO else a if b == _ZERO else None
            return ("pred", dest, ("nz", d)) if d is not None else None
        if mods == {"GE", "AND"} and b == _ZERO and a is not None:
            if a[0] == "xor":
                return "pred", dest, ("same_sign", a[1])
            return "pred", dest, ("nonneg", a)
        return None

    def _guarded(self, instr: Instruction, reads: list, guard, dest: str, old):
        pred = self.pred.get(guard.register)
        if pred is None or old is None:
            return None
        op, mods = instr.opcode, instr.modifiers
        holds = _condition(pred, guard.negated)
        if holds is None:
            return None
        if holds[0] == "ge":
            # One correction round: r_k >= d, so r_{k+1} = r_k - d and q_{k+1} = q_k + 1.
            _, kind, k, x, d = holds
            terms = _step_terms(op, mods, reads)
            if terms is None or k > 1:
                return None
            if old == ("r", kind, k, x, d) and _same_terms(terms, [old, _neg(d)]):
                return "reg", dest, ("r", kind, k + 1, x, d)
            if old == ("q", kind, k, x, d) and _same_terms(terms, [old, ("imm", 1)]):
                return "reg", dest, ("q", kind, k + 1, x, d)
            return None
        if holds[0] == "zero":
            # d == 0: the sequence writes ~d; for d != 0 the value is unchanged.
            final = _final(old)
            if op == "LOP3" and mods == ("LUT",) and len(reads) == 6 and reads[1] == _ZERO \
                    and reads[3] == _ZERO and reads[4] == ("imm", 0x33) and final is not None \
                    and reads[2] == holds[1] == final[3]:
                return "reg", dest, old
            return None
        if _negation(op, mods, reads) != old:
            return None
        x, d = (_unabs(old[3]), _unabs(old[4])) if old[0] in ("q", "r") and len(old) == 5 \
            else (None, None)
        if x is None or d is None or old[1] != "s" or old[2] != 2:
            return None
        if holds[0] == "differ" and old[0] == "q" and holds[1] == frozenset((x, d)):
            return "reg", dest, ("sdiv", x, d)
        if holds[0] == "negative" and old[0] == "r" and holds[1] == x:
            return "reg", dest, ("srem", x, d)
        return None


def _next_register(name: str) -> str:
    prefix = "UR" if name.startswith("UR") else "R"
    digits = name[len(prefix):]
    return f"{prefix}{int(digits) + 1}" if digits.isdigit() else name


def _zero_halves(instr: Instruction) -> bool:
    """``HFMA2[.MMA] d, -RZ, RZ, 0, 0``: ``-0 * 0 + 0`` in both halves, the word 0."""
    ops = instr.operands
    first = ops[1]
    negated_zero = type(first) is ModifiedOperand and first.negate and type(
        first.operand) is Register and first.operand.name == "RZ"
    plain_zero = type(first) is Register and first.name == "RZ"
    return (negated_zero or plain_zero) and type(ops[2]) is Register and ops[2].name == "RZ" \
        and all(type(o) is Immediate and o.value == 0 for o in ops[3:5])


def _same_terms(terms: list, want: list) -> bool:
    return sorted(terms, key=repr) == sorted(want, key=repr)


def _is(value, tag: str) -> bool:
    return value is not None and value[0] == tag


def _neg(value):
    if value is None:
        return None
    if value[0] == "neg":
        return value[1]
    if value[0] == "imm":
        return ("imm", (-value[1]) & 0xFFFFFFFF)
    return ("neg", value)


def _unabs(value):
    return value[1] if value is not None and value[0] == "abs" else None


def _sum_of(reads: list):
    """The non-zero terms of an ``IADD3 d, a, b, c`` / ``VIADD d, a, b`` sum."""
    if any(r is None for r in reads):
        return None
    return [r for r in reads if r != _ZERO]


def _step_terms(op: str, mods: tuple, reads: list):
    """The terms a guarded correction step adds: ``IADD3 d, a, b, c``, ``VIADD d, a, b``,
    ``IMAD.IADD d, a, 0x1, b``."""
    if op == "IADD3" and not mods and len(reads) == 4:
        return _sum_of(reads[1:])
    if op == "VIADD" and not mods and len(reads) == 3:
        return _sum_of(reads[1:])
    if op == "IMAD" and mods == ("IADD",) and len(reads) == 4 and reads[2] == ("imm", 1):
        return _sum_of([reads[1], reads[3]])
    return None


def _negation(op: str, mods: tuple, reads: list):
    """The value a negation step negates: ``IMAD.MOV d, RZ, RZ, -a``, ``IADD3 d, -a, RZ,
    RZ`` (and ``RZ, -a, RZ``)."""
    if op == "IMAD" and mods == ("MOV",) and len(reads) == 4 and reads[1] == _ZERO and (
            reads[2] == _ZERO) and reads[3] is not None and reads[3][0] == "neg":
        return reads[3][1]
    if op == "IADD3" and not mods and len(reads) == 4:
        terms = _sum_of(reads[1:])
        if terms is not None and len(terms) == 1 and terms[0][0] == "neg":
            return terms[0][1]
    return None


def _condition(pred, negated: bool):
    """What a guard ``@[!]P`` says holds when the guarded instruction runs."""
    tag = pred[0]
    if tag in ("ge", "lt"):
        ge = (tag == "ge") != negated
        return ("ge",) + pred[1:] if ge else None
    if tag == "nz":
        return ("zero", pred[1]) if negated else None
    if tag == "same_sign":
        return ("differ", pred[1]) if negated else None
    if tag == "nonneg":
        return ("negative", pred[1]) if negated else None
    return None


def _final(value):
    """``(opcode, type, x, d)`` when ``value`` is a finished quotient or remainder."""
    if value is None:
        return None
    tag = value[0]
    if tag == "q" and value[1] == "u" and value[2] == 2:
        return "div", "u32", value[3], value[4]
    if tag == "r" and value[1] == "u" and value[2] == 2:
        return "rem", "u32", value[3], value[4]
    if tag == "rem":
        return "rem", value[1], value[2], value[3]
    if tag == "sdiv":
        return "div", "s32", value[1], value[2]
    if tag == "srem":
        return "rem", "s32", value[1], value[2]
    return None


def plan_divisions(instructions: tuple[Instruction, ...],
                   known: dict[str, tuple] | None = None) -> DivisionPlan:
    """The divisions recognised in one block's instructions (see the module documentation).

    ``known`` gives what registers hold at the block's entry: ``("cb", bank, offset)``, a
    constant-bank word; ``("sr", name)``, a special register fixed for the thread;
    ``("imm", value)``, a constant.

    Examples
    --------
    >>> from kernelcheck.sass.grammar import parse_instruction_text
    >>> lines = ["I2F.U32.RP R0, R9", "MUFU.RCP R0, R0", "IADD3 R2, R0, 0xffffffe, RZ",
    ...     "F2I.FTZ.U32.TRUNC.NTZ R3, R2", "HFMA2.MMA R2, -RZ, RZ, 0, 0",
    ...     "IADD3 R5, RZ, -R3, RZ", "IMAD R5, R5, R9, RZ", "MOV R2, RZ",
    ...     "IMAD.HI.U32 R4, R3, R5, R2", "IMAD.HI.U32 R5, R4, R8, RZ", "IADD3 R4, -R5, RZ, RZ",
    ...     "IMAD R3, R4, R9, R8", "ISETP.GE.U32.AND P0, PT, R3, R9, PT",
    ...     "@P0 IADD3 R3, R3, -R9, RZ", "@P0 IADD3 R5, R5, 0x1, RZ",
    ...     "ISETP.GE.U32.AND P1, PT, R3, R9, PT", "@P1 IADD3 R5, R5, 0x1, RZ"]
    >>> from dataclasses import replace
    >>> block = tuple(replace(Instruction(p.opcode, p.modifiers, p.operands, p.guard),
    ...     index=k) for k, p in enumerate(parse_instruction_text(t) for t in lines))
    >>> plan_divisions(block).results
    {16: [('R5', 'div', 'u32', '%dv9_2', '%dv0_1')]}
    """
    if not any(i.opcode == "I2F" and "RP" in i.modifiers for i in instructions):
        return DivisionPlan()
    matcher = _Matcher(known)
    for instr in instructions:
        matcher.step(instr)
    plan = matcher.plan
    used = {name for rows in plan.results.values() for row in rows for name in row[3:]}
    plan.copies = {k: [c for c in v if c[1] in used] for k, v in plan.copies.items()}
    plan.copies = {k: v for k, v in plan.copies.items() if v}
    return plan
