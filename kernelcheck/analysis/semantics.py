"""Integer semantics of PTX instructions as terms (:mod:`kernelcheck.analysis.terms`).

One function, :func:`evaluate_instruction`, maps an instruction and the terms of its source
operands to the terms of its destinations. Each rule cites the PTX ISA section (ISA 8.x,
CUDA 12.x/13.x) it follows. Anything not listed yields an ``Opaque``
value: sound, since an opaque value may be anything of its width.

Soundness of the congruence convention (see :mod:`kernelcheck.analysis.terms`): ``add``,
``sub``, ``mul.lo``, ``mad.lo``, ``shl``, ``neg`` and ``not`` compute their result modulo
``2**width`` (ISA §9.7.1, §9.7.8), so the mathematical term is congruent to the register.
Instructions that interpret their operands (``mul.wide``, ``mad.wide``, ``shr``, ``min``,
``max``, ``div``, ``rem``, ``setp``, ``cvt`` widening, ``and``) get ``wrap``
around those operands, which makes the interpretation exact.
"""

from __future__ import annotations

from kernelcheck.analysis.terms import (
    MEMORY_LEAF,
    Add,
    BitAnd,
    BitOr,
    BitXor,
    Cmp,
    Const,
    Div,
    Join,
    Max,
    Min,
    Mul,
    Opaque,
    PAnd,
    Param,
    ParamAt,
    PConst,
    POpaque,
    POr,
    Pow2,
    Rem,
    Shr,
    ShrVar,
    Special,
    Term,
    Wrap,
    add,
    geometry_max,
    mul,
    neg,
    opaque_leaves,
    pred_not,
    wrap,
)
from kernelcheck.ir.nodes import Instruction, type_size

__all__ = ["instruction_type", "evaluate_instruction", "compare_predicate", "is_memory_value",
           "known_zero"]

_INT_TYPES = {"s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64", "b8", "b16", "b32",
              "b64"}
_UNSIGNED_CMP = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}
_SIGNED_CMP = {"lt", "le", "gt", "ge", "eq", "ne"}


def instruction_type(instr: Instruction, which: int = 0) -> str | None:
    """The ``which``-th type modifier of ``instr`` (``cvt.u64.u32``: 0 is u64, 1 is u32)."""
    found = [m for m in instr.modifiers if type_size(m) and m not in ("pred",)
             or m == "pred"]
    return found[which] if len(found) > which else None


def is_memory_value(term) -> bool:
    """Whether ``term`` depends on a value loaded from memory."""
    return bool(opaque_leaves(term) & MEMORY_LEAF)


def _bits(ty: str | None) -> int:
    return type_size(ty) * 8 if ty else 0


def _signed(ty: str | None) -> bool:
    return bool(ty) and ty[0] == "s"


def _opaque(instr: Instruction, srcs, bits: int) -> Opaque:
    memory = any(is_memory_value(s) for s in srcs if isinstance(s, Term))
    return Opaque(f"{instr.opcode}@{instr.index}", bits or 64, memory)


def compare_predicate(instr: Instruction, a: Term, b: Term):
    """The predicate ``setp.<cmp>.<type> a, b`` computes (floats are opaque)."""
    ty = instruction_type(instr)
    bits = _bits(ty)
    cmp = next((m for m in instr.modifiers if m in _SIGNED_CMP or m in _UNSIGNED_CMP), None)
    if ty not in _INT_TYPES or cmp is None:
        return POpaque(f"setp@{instr.index}")
    if cmp in _UNSIGNED_CMP:
        op, signed = _UNSIGNED_CMP[cmp], False
    else:
        # ISA §9.7.3.1: .b types compare as unsigned for lt/le/gt/ge; eq/ne are sign-blind.
        op, signed = cmp, _signed(ty)
    return Cmp(op, wrap(a, bits, signed), wrap(b, bits, signed))


def evaluate_instruction(instr: Instruction, srcs: list) -> Term | None:
    """The term of the (single, non-predicate) destination of ``instr``.

    Parameters
    ----------
    instr : Instruction
        An arithmetic, move or conversion instruction.
    srcs : list
        Terms (or predicates, for ``selp``) of the source operands in order.

    Returns
    -------
    Term or None
        ``None`` when ``instr`` is not a value-producing instruction this module models;
        the caller then uses an opaque value.

    Examples
    --------
    >>> from kernelcheck.analysis.terms import Special, render
    >>> i = Instruction("mul", ("wide", "s32"))
    >>> render(evaluate_instruction(i, [Special("%tid.x"), Const(4)]))
    '4*%tid.x'
    """
    op = instr.opcode
    ty = instruction_type(instr)
    bits = _bits(ty)
    signed = _signed(ty)
    integer = ty in _INT_TYPES
    if op == "mov" and len(srcs) == 1:
        return srcs[0] if isinstance(srcs[0], Term) else None
    if op == "cvta":
        # cvta.to.global / cvta.global: generic and global addresses of global memory are the
        # same numbers on every supported architecture (ISA §9.7.9.17, §6.4.1 note).
        return srcs[0] if "global" in instr.modifiers else None
    if not integer:
        if op == "cvt":
            return _cvt(instr, srcs)
        if op == "selp" and len(srcs) == 3:
            return Join((srcs[0], srcs[1]))
        return None
    if any(not isinstance(s, Term) for s in srcs[:2]):
        return None
    if any(m.startswith("sat") or m in ("hi", "cc") for m in instr.modifiers):
        return None  # saturating, high-half and carry forms are not congruences
    if op == "add" and len(srcs) == 2 and not _has_carry(instr):
        return _fold_masked(add(srcs[0], srcs[1]), bits)
    if op == "sub" and len(srcs) == 2 and not _has_carry(instr):
        return _fold_masked(add(srcs[0], neg(srcs[1])), bits)
    if op == "neg" and len(srcs) == 1:
        return neg(srcs[0])
    if op == "not" and len(srcs) == 1:
        return add(neg(srcs[0]), Const(-1))  # ~a == -a - 1 modulo 2**bits
    if op in ("mul", "mad") and "lo" in instr.modifiers:
        product = mul(srcs[0], srcs[1])
        return _fold_masked(add(product, srcs[2]), bits) if op == "mad" else product
    if op in ("mul", "mad") and "wide" in instr.modifiers:
        # ISA §9.7.1.5: the full 2*bits product of the operands read as signed/unsigned.
        product = mul(wrap(srcs[0], bits, signed), wrap(srcs[1], bits, signed))
        return add(product, srcs[2]) if op == "mad" else product
    if op in ("shl", "shr") and bits and len(srcs) == 2:
        # ISA §9.7.8.7-8: the amount is an unsigned 32-bit value, clamped to the width.
        amount = wrap(srcs[1], 32, False)
        if type(amount) is Const:
            k = min(amount.value, bits)
            # shl by the width leaves 0, congruent to x * 2**width modulo 2**width.
            return mul(srcs[0], Const(1 << k)) if op == "shl" else shift_right(
                wrap(srcs[0], bits, signed), k)
        if op == "shl":
            return mul(srcs[0], Pow2(amount, bits))
        return ShrVar(wrap(srcs[0], bits, signed), amount, bits)
    if op in ("min", "max") and len(srcs) == 2 and "relu" not in instr.modifiers:
        a, b = wrap(srcs[0], bits, signed), wrap(srcs[1], bits, signed)
        return Min(a, b) if op == "min" else Max(a, b)
    if op in ("div", "rem") and len(srcs) == 2:
        a, b = wrap(srcs[0], bits, signed), wrap(srcs[1], bits, signed)
        return Div(a, b) if op == "div" else Rem(a, b)
    if op in ("or", "xor") and len(srcs) == 2 and not (
            ~known_zero(srcs[0], bits) & ~known_zero(srcs[1], bits) & ((1 << bits) - 1)):
        # No bit can be set in both operands: no carries, so or == xor == add (mod 2**bits).
        return add(srcs[0], srcs[1])
    if op in ("and", "or", "xor") and len(srcs) == 2:
        a, b = wrap(srcs[0], bits, False), wrap(srcs[1], bits, False)
        return {"and": BitAnd, "or": BitOr, "xor": BitXor}[op](a, b)
    if op == "selp" and len(srcs) == 3:
        return Join((srcs[0], srcs[1]))
    if op == "cvt":
        return _cvt(instr, srcs)
    return None


#: Exclusive upper bounds of the special registers (CUDA limits: at most 1024 threads per
#: block and 64 in z, at most 2**31 - 1 blocks per grid dimension, 32 lanes).
_SPECIAL_LIMIT = {"%tid.x": 1 << 10, "%tid.y": 1 << 10, "%tid.z": 1 << 6,
                  "%ntid.x": (1 << 10) + 1, "%ntid.y": (1 << 10) + 1, "%ntid.z": 65,
                  "%ctaid.x": 1 << 31, "%ctaid.y": 1 << 31, "%ctaid.z": 1 << 31,
                  "%nctaid.x": 1 << 31, "%nctaid.y": 1 << 31, "%nctaid.z": 1 << 31,
                  "%laneid": 1 << 5}


def _fold_masked(term: Term, bits: int) -> Term:
    """``term`` with a summand pair ``a - (a & M)`` replaced by ``a & ~M`` where that is a
    mask of low bits, ``a mod 2**j`` (``x % 4`` of a signed ``x`` known non-negative,
    compiled as ``x - (x & 0x7ffffffc)``).

    Exact modulo ``2**bits``: the bits of ``a & M`` are bits of ``a`` (of its wrap, which
    is congruent to it), so the subtraction borrows nothing and clears exactly them. Where
    ``a`` is a special register, the mask keeps only the bits its values can have
    (:data:`_SPECIAL_LIMIT`, a power of two).

    >>> from kernelcheck.analysis.terms import Special
    >>> x = Special("%tid.x")
    >>> _fold_masked(add(x, neg(BitAnd(x, Const(0x7ffffffc)))), 32)
    BitAnd(a=Special(name='%tid.x'), b=Const(value=3))
    """
    if not bits or type(term) is not Add:
        return term
    args = list(term.args)
    for k, part in enumerate(args):
        if type(part) is not Mul or len(part.args) != 2 or part.args[0] != Const(-1):
            continue
        b = part.args[1]
        if type(b) is not BitAnd or type(b.b) is not Const:
            continue
        for j, a in enumerate(args):
            if j == k or wrap(a, bits, False) != b.a:
                continue
            mask = ~b.b.value & ((1 << bits) - 1)
            inner = b.a.arg if type(b.a) is Wrap else b.a
            limit = _SPECIAL_LIMIT.get(inner.name) if type(inner) is Special else None
            if limit is not None and limit & (limit - 1) == 0 and bits >= 32:
                mask &= limit - 1
            if mask & (mask + 1):
                # Only a remainder (a mask of low bits) is a better term: k - k % 4 as
                # k & ~3 would lose its linear form in k, which loop counts rely on.
                return term
            rest = [x for i, x in enumerate(args) if i not in (j, k)]
            return add(BitAnd(b.a, Const(mask)), *rest)
    return term


def shift_right(a: Term, k: int) -> Term:
    """``Shr(a, k)`` (``floor(a / 2**k)`` of the wrapped value ``a``), folded to a constant
    where ``a`` is one, or is a special register (or a wrap of one of at least 32 bits)
    whose every value lies below ``2**k``: then the quotient is 0.

    >>> from kernelcheck.analysis.terms import Special
    >>> shift_right(wrap(Special("%tid.x"), 32, True), 31), shift_right(Const(-8), 2)
    (Const(value=0), Const(value=-2))
    """
    if type(a) is Const:
        return Const(a.value >> k)
    inner = a.arg if type(a) is Wrap and a.bits >= 32 else a
    if type(inner) is Special and _SPECIAL_LIMIT.get(inner.name, 1 << 64) <= 1 << k:
        return Const(0)
    top = geometry_max(inner)
    if top is not None and top < 1 << k and (inner is a or top < 1 << (
            a.bits - 1 if a.signed else a.bits)):
        return Const(0)  # a sum or product of launch coordinates below 2**k
    high = _high_words(a, k)
    if high is not None:
        return high
    return Shr(a, k)


def _below(term: Term, k: int) -> bool:
    """Whether every value of ``term`` lies in ``[0, 2**k)``."""
    kind = type(term)
    if kind in (Param, ParamAt):
        return term.size * 8 <= k
    if kind is Wrap:
        return not term.signed and term.bits <= k
    if kind is Special:
        return k >= 32
    if kind is Const:
        return 0 <= term.value < 1 << k
    return False


def _high_words(a: Term, k: int) -> Term | None:
    """``Shr(Wrap(L + 2**k * H, n, unsigned), k)`` as ``Wrap(H, n - k, unsigned)`` when one
    summand ``L`` lies in ``[0, 2**k)`` and every other is a multiple of ``2**k``: then
    ``(L + 2**k * H) mod 2**n = L + 2**k * (H mod 2**(n - k))``, and the quotient is ``H
    mod 2**(n - k)``. Two 32-bit parameters read as one 64-bit word and split again (the
    SASS ``LDC.64`` of adjacent ``int`` arguments) give their second parameter back.

    >>> from kernelcheck.analysis.terms import render
    >>> p, q = Param("p", 8, 4), Param("q", 12, 4)
    >>> render(shift_right(wrap(add(p, mul(Const(1 << 32), q)), 64, False), 32))
    'q'
    """
    if type(a) is not Wrap or a.signed or a.bits <= k or type(a.arg) is not Add:
        return None
    low, high = [], []
    for term in a.arg.args:
        if type(term) is Const and term.value % (1 << k) == 0:
            high.append(Const(term.value >> k))
        elif type(term) is Mul and type(term.args[0]) is Const and (
                term.args[0].value % (1 << k) == 0):
            high.append(mul(Const(term.args[0].value >> k), *term.args[1:]))
        else:
            low.append(term)
    if len(low) > 1 or (low and not _below(low[0], k)) or not high:
        return None
    return wrap(add(*high), a.bits - k, False)


def known_zero(term: Term, bits: int) -> int:
    """A mask of the bits known to be 0 in the low ``bits`` bits of every value of ``term``.

    Terms are congruent to register values modulo ``2**bits``, so only the low ``bits``
    bits are meaningful; every rule below holds modulo ``2**bits``.

    Examples
    --------
    >>> from kernelcheck.analysis.terms import Special
    >>> hex(known_zero(mul(Special("%ctaid.x"), Const(256)), 32))
    '0xff'
    """
    full = (1 << bits) - 1
    kind = type(term)
    if kind is Const:
        return ~term.value & full
    if kind is Mul and type(term.args[0]) is Const and term.args[0].value:
        c = term.args[0].value
        return ((c & -c) - 1) & full  # trailing zeros of the constant factor
    if kind is BitAnd:
        return (known_zero(term.a, bits) | known_zero(term.b, bits)) & full
    if kind is Wrap and not term.signed and term.bits <= bits:
        high = full & ~((1 << term.bits) - 1)
        return high | known_zero(term.arg, term.bits)
    if kind is Add:
        zeros = [known_zero(a, bits) for a in term.args]
        ones = 0
        for z in zeros:
            maybe = ~z & full
            if ones & maybe:
                # Carries possible: keep only the common trailing zeros.
                tz = min(((z + 1) & ~z).bit_length() - 1 for z in zeros)
                return (1 << max(tz, 0)) - 1
            ones |= maybe
        return ~ones & full
    return 0


def _has_carry(instr: Instruction) -> bool:
    return "cc" in instr.modifiers


def _cvt(instr: Instruction, srcs) -> Term | None:
    dst, src = instruction_type(instr, 0), instruction_type(instr, 1)
    if dst not in _INT_TYPES or src not in _INT_TYPES or not isinstance(srcs[0], Term):
        return None
    if any(m.startswith("sat") for m in instr.modifiers):
        return None
    # ISA §9.7.9.21: widening sign- or zero-extends the source; narrowing keeps low bits,
    # which is congruent to the source modulo the destination width.
    if _bits(dst) > _bits(src):
        return wrap(srcs[0], _bits(src), _signed(src))
    return srcs[0]


def predicate_op(instr: Instruction, srcs: list):
    """The predicate computed by ``and/or/xor/not.pred`` and ``setp`` combining forms."""
    op = instr.opcode
    if op == "not":
        return pred_not(srcs[0])
    if op == "and":
        return PAnd(srcs[0], srcs[1])
    if op == "or":
        return POr(srcs[0], srcs[1])
    if op == "mov":
        return srcs[0]
    return POpaque(f"{op}@{instr.index}")


def combine_setp(instr: Instruction, base, extra):
    """``setp.cmp.and/or/xor`` combines its comparison with a third predicate operand."""
    if "and" in instr.modifiers:
        return PAnd(base, extra)
    if "or" in instr.modifiers:
        return POr(base, extra)
    if "xor" in instr.modifiers:
        return POpaque(f"setp@{instr.index}")
    return base


def constant_pred(value: bool) -> PConst:
    return PConst(value)
