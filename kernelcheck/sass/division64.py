"""Recognise ptxas's subroutine for 64-bit unsigned division, ``__cuda_sm20_div_u64``.

For PTX ``div.u64 q, x, d`` ptxas emits an inline 32-bit fast path (taken when neither
operand has a bit at or above ``2**32``; :mod:`kernelcheck.sass.division` recognises its
``div.u32``) and, for the other case, a call of a subroutine of its own, placed after the
kernel's code::

    CALL.REL.NOINC $__internal_0_$__cuda_sm20_div_u64
    ...
  $__internal_0_$__cuda_sm20_div_u64:
    I2F.U64.RP R6, R4               ; float(d), rounded up
    MUFU.RCP R6, R6                 ; about 1/float(d)
    ...                             ; two Newton steps on 2**64 / d, q0 = umulhi(z, x)
    SEL R8, R8, 0xffffffff, P1      ; d == 0: all ones
    SEL R9, R9, 0xffffffff, P1
    RET.REL.NODEC R6

The subroutine touches no memory, so the inliner leaves the call in place and the lifter
makes every register it writes opaque (:mod:`kernelcheck.sass.inline`). That loses the
quotient, which the analysis needs where a loop's trip count is derived from it (a
grid-stride loop over a 64-bit count unrolled after a remainder loop: the remainder loop
runs ``(q + 1) % U`` times).

:func:`match_div_u64` compares the subroutine's instructions with the bodies ptxas emits
(:data:`TEMPLATES`, one per code generation seen), instruction for instruction: the same
opcodes, modifiers, immediates, constant operands and guards, with the registers renamed
one to one (a register of the template stands for one register of the code and no other).
The template says which registers hold the dividend, the divisor and the quotient; the
renaming gives those of the code. Anything else (another compiler's body, a modified one)
matches no template and the call stays as it was: its registers opaque.

Soundness. As for the 32-bit expansion (:mod:`kernelcheck.sass.division`), what is trusted
is that the sequence ptxas emits for ``div.u64`` computes ``div.u64``: the quotient
registers hold ``floor(x / d)`` for ``d != 0``. For ``d == 0`` the subroutine gives all
ones and ``div.u64`` is unspecified; the analysis gives no bound to a quotient whose
divisor may be 0, so nothing is assumed of that case. Only the quotient is modelled: every
other register the subroutine writes (its scratch registers, the dividend's, the
remainder's) stays opaque. A call under a guard is not modelled.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kernelcheck.sass.printer import format_sass_instruction

__all__ = ["DivU64", "TEMPLATES", "match_div_u64"]


@dataclass(frozen=True)
class DivU64:
    """The registers of one ``__cuda_sm20_div_u64`` body: ``dividend``, ``divisor`` and
    ``quotient`` as (low word, high word) SASS register names."""

    dividend: tuple[str, str]
    divisor: tuple[str, str]
    quotient: tuple[str, str]


#: ``(roles, body)``: the body of ``__cuda_sm20_div_u64`` as nvdisasm prints it (one
#: instruction a line, ``.reuse`` flags left out of the comparison), and the registers of
#: its operands and result. From CUDA 12's ptxas for sm_80 and for sm_90.
TEMPLATES: tuple[tuple[DivU64, str], ...] = (
    (DivU64(dividend=("R9", "R7"), divisor=("R4", "R5"), quotient=("R8", "R9")), """
    I2F.U64.RP R6, R4
    MUFU.RCP R6, R6
    IADD3 R10, R6, 0x1ffffffe, RZ
    F2I.U64.TRUNC R10, R10
    IMAD.WIDE.U32 R12, R10, R4, RZ
    IMAD R13, R10, R5, R13
    IADD3 R15, P0, RZ, -R12, RZ
    IMAD R13, R11, R4, R13
    IMAD.HI.U32 R12, R10, R15, RZ
    IMAD.X R17, RZ, RZ, ~R13, P0
    IMAD.MOV.U32 R13, RZ, RZ, R10
    IMAD R19, R11, R17.reuse, RZ
    IMAD.WIDE.U32 R12, P0, R10, R17, R12
    IMAD.HI.U32 R17, R11, R17, RZ
    IMAD.HI.U32 R12, P1, R11, R15, R12
    IADD3.X R6, R17, R11, RZ, P0, !PT
    IADD3 R13, P2, R19, R12, RZ
    IADD3.X R15, RZ, RZ, R6, P2, P1
    IMAD.WIDE.U32 R10, R13, R4, RZ
    IMAD R6, R13, R5, R11
    IADD3 R11, P0, RZ, -R10, RZ
    IMAD R6, R15, R4, R6
    IMAD.HI.U32 R12, R13, R11, RZ
    IMAD.X R8, RZ, RZ, ~R6, P0
    IMAD.WIDE.U32 R12, P0, R13, R8, R12
    IMAD R17, R15.reuse, R8, RZ
    IMAD.HI.U32 R6, P1, R15, R11, R12
    IMAD.HI.U32 R8, R15, R8, RZ
    IADD3 R6, P2, R17, R6, RZ
    IMAD.X R15, R8, 0x1, R15, P0
    IMAD.HI.U32 R10, R6, R9, RZ
    IADD3.X R8, RZ, RZ, R15, P2, P1
    IMAD.MOV.U32 R11, RZ, RZ, RZ
    IMAD.WIDE.U32 R10, R6, R7, R10
    IMAD R13, R8.reuse, R7, RZ
    IMAD.HI.U32 R10, P0, R8, R9, R10
    IMAD.HI.U32 R6, R8, R7, RZ
    IADD3 R13, P1, R13, R10, RZ
    IMAD.X R6, RZ, RZ, R6, P0
    IMAD.WIDE.U32 R10, R13, R4, RZ
    IMAD.X R15, RZ, RZ, R6, P1
    IMAD R6, R13, R5, R11
    IADD3 R11, P1, -R10, R9, RZ
    IMAD R6, R15, R4.reuse, R6
    ISETP.GE.U32.AND P0, PT, R11, R4, PT
    IMAD.X R17, R7, 0x1, ~R6, P1
    IADD3 R7, P1, -R4.reuse, R11, RZ
    IADD3 R6, P2, R13, 0x1, RZ
    ISETP.GE.U32.AND.EX P0, PT, R17.reuse, R5, PT, P0
    IMAD.X R9, R17, 0x1, ~R5, P1
    ISETP.NE.U32.AND P1, PT, R4, RZ, PT
    IMAD.X R8, RZ, RZ, R15, P2
    SEL R7, R7, R11, P0
    SEL R13, R6, R13, P0
    SEL R9, R9, R17, P0
    SEL R6, R8, R15, P0
    ISETP.GE.U32.AND P0, PT, R7, R4, PT
    IMAD.MOV.U32 R7, RZ, RZ, 0x0
    IADD3 R8, P2, R13, 0x1, RZ
    ISETP.GE.U32.AND.EX P0, PT, R9, R5, PT, P0
    ISETP.NE.AND.EX P1, PT, R5, RZ, PT, P1
    IMAD.X R9, RZ, RZ, R6, P2
    SEL R8, R8, R13, P0
    SEL R9, R9, R6, P0
    IMAD.MOV.U32 R6, RZ, RZ, R2
    SEL R8, R8, 0xffffffff, P1
    SEL R9, R9, 0xffffffff, P1
    RET.REL.NODEC R6, copy_gridstride_i64
"""),
    (DivU64(dividend=("R7", "R9"), divisor=("R4", "R5"), quotient=("R8", "R9")), """
    I2F.U64.RP R8, R4
    MUFU.RCP R8, R8
    VIADD R10, R8, 0x1ffffffe
    F2I.U64.TRUNC R10, R10
    IMAD.WIDE.U32 R12, R10, R4, RZ
    IMAD R13, R10, R5, R13
    IADD3 R15, P0, RZ, -R12, RZ
    IMAD R13, R11, R4, R13
    IMAD.HI.U32 R12, R10, R15, RZ
    IADD3.X R17, RZ, ~R13, RZ, P0, !PT
    IMAD.MOV.U32 R13, RZ, RZ, R10
    IMAD.WIDE.U32 R12, P0, R10, R17, R12
    IMAD R19, R11.reuse, R17, RZ
    IMAD.HI.U32 R12, P1, R11, R15, R12
    IMAD.HI.U32 R17, R11, R17, RZ
    IADD3 R13, P2, R19, R12, RZ
    IMAD.X R8, R17, 0x1, R11, P0
    IMAD.WIDE.U32 R10, R13, R4, RZ
    IADD3.X R15, RZ, RZ, R8, P2, P1
    IMAD R8, R13, R5, R11
    IADD3 R11, P0, RZ, -R10, RZ
    IMAD R8, R15, R4, R8
    IMAD.HI.U32 R12, R13, R11, RZ
    IMAD.X R10, RZ, RZ, ~R8, P0
    IMAD.WIDE.U32 R12, P0, R13, R10, R12
    IMAD R17, R15.reuse, R10, RZ
    IMAD.HI.U32 R8, P1, R15, R11, R12
    IMAD.HI.U32 R10, R15, R10, RZ
    IADD3 R8, P2, R17, R8, RZ
    IMAD.X R15, R10, 0x1, R15, P0
    IMAD.HI.U32 R10, R8, R7, RZ
    IADD3.X R12, RZ, RZ, R15, P2, P1
    IMAD.MOV.U32 R11, RZ, RZ, RZ
    IMAD.WIDE.U32 R10, R8, R9, R10
    IMAD R13, R12.reuse, R9, RZ
    IMAD.HI.U32 R10, P0, R12, R7, R10
    IMAD.HI.U32 R8, R12, R9, RZ
    IADD3 R13, P1, R13, R10, RZ
    IMAD.X R8, RZ, RZ, R8, P0
    IMAD.WIDE.U32 R10, R13, R4, RZ
    IADD3.X R15, RZ, R8, RZ, P1, !PT
    IMAD R8, R13, R5, R11
    IADD3 R11, P1, -R10, R7, RZ
    IMAD R8, R15, R4.reuse, R8
    ISETP.GE.U32.AND P0, PT, R11, R4, PT
    IMAD.X R17, R9, 0x1, ~R8, P1
    IADD3 R7, P1, -R4.reuse, R11, RZ
    IADD3 R8, P2, R13, 0x1, RZ
    ISETP.GE.U32.AND.EX P0, PT, R17.reuse, R5, PT, P0
    IMAD.X R9, R17, 0x1, ~R5, P1
    ISETP.NE.U32.AND P1, PT, R4, RZ, PT
    IMAD.X R10, RZ, RZ, R15, P2
    SEL R7, R7, R11, P0
    SEL R13, R8, R13, P0
    SEL R9, R9, R17, P0
    SEL R10, R10, R15, P0
    ISETP.GE.U32.AND P0, PT, R7, R4, PT
    IMAD.MOV.U32 R7, RZ, RZ, 0x0
    IADD3 R8, P2, R13, 0x1, RZ
    ISETP.GE.U32.AND.EX P0, PT, R9, R5, PT, P0
    ISETP.NE.AND.EX P1, PT, R5, RZ, PT, P1
    IMAD.X R9, RZ, RZ, R10, P2
    SEL R8, R8, R13, P0
    SEL R9, R9, R10, P0
    SEL R8, R8, 0xffffffff, P1
    SEL R9, R9, 0xffffffff, P1
    RET.REL.NODEC R6, copy_gridstride_i64
"""),
)

_REGISTER = re.compile(r"\b(U?[RP]\d+)\b")


def _parts(text: str) -> list[str]:
    """The text of one instruction split into alternating literal text and register
    names (odd positions); the label a ``RET`` names is left out."""
    text = text.replace(".reuse", "").strip()
    if text.startswith("RET"):
        text = text.split(",")[0]
    return _REGISTER.split(text)


_PARSED = tuple((roles, tuple(_parts(line) for line in body.strip().splitlines()))
                for roles, body in TEMPLATES)


def match_div_u64(instructions) -> DivU64 | None:
    """The registers of the code's dividend, divisor and quotient when ``instructions``
    (the subroutine's, in layout order) are one of :data:`TEMPLATES` with its registers
    renamed one to one; else ``None``.

    >>> from kernelcheck.binary.nvdisasm import SassFunction, SassInstruction
    >>> from kernelcheck.sass.function import function_from_sass
    >>> roles, body = TEMPLATES[0]
    >>> lines = [line.strip() for line in body.strip().splitlines()]
    >>> code = function_from_sass(SassFunction("k", tuple(
    ...     SassInstruction(16 * k, t) for k, t in enumerate(lines)))).instructions
    >>> match_div_u64(code) == roles
    True
    >>> match_div_u64(code[1:]) is None
    True
    """
    texts = [_parts(format_sass_instruction(i)) for i in instructions]
    for roles, template in _PARSED:
        if len(template) != len(texts):
            continue
        mapping = _renaming(template, texts)
        if mapping is not None:
            return DivU64(*(tuple(mapping[r] for r in pair) for pair in (
                roles.dividend, roles.divisor, roles.quotient)))
    return None


def _renaming(template, texts) -> dict[str, str] | None:
    forward: dict[str, str] = {}
    backward: dict[str, str] = {}
    for mine, theirs in zip(template, texts, strict=True):
        if len(mine) != len(theirs):
            return None
        for k, (a, b) in enumerate(zip(mine, theirs, strict=True)):
            if k % 2 == 0:
                if a != b:
                    return None
                continue
            if a[:1] != b[:1] or a.startswith("U") != b.startswith("U") or (
                    forward.setdefault(a, b) != b or backward.setdefault(b, a) != a):
                return None
    return forward
