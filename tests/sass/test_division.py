"""Division by a runtime value in SASS (kernelcheck.sass.division): the sequences ptxas emits
for div/rem are recognised exactly, anything else stays opaque."""

from __future__ import annotations

import struct

import pytest

from kernelcheck.analysis.summary import analyze_kernel
from kernelcheck.binary.nvdisasm import SassFunction, SassInstruction
from kernelcheck.ir.nodes import Module, Param
from kernelcheck.launch.evaluate import evaluate
from kernelcheck.sass.division import plan_divisions
from kernelcheck.sass.function import function_from_sass
from kernelcheck.sass.lift import lift_function

# q = x / d (unsigned), x in R8, d in R9, as ptxas 13 writes it for sm_90.
UNSIGNED = [
    "I2F.U32.RP R0, R9",
    "MUFU.RCP R0, R0",
    "IADD3 R2, R0, 0xffffffe, RZ",
    "F2I.FTZ.U32.TRUNC.NTZ R3, R2",
    "HFMA2.MMA R2, -RZ, RZ, 0, 0",
    "IADD3 R5, RZ, -R3, RZ",
    "IMAD R5, R5, R9, RZ",
    "IMAD.HI.U32 R4, R3, R5, R2",
    "IMAD.HI.U32 R5, R4, R8, RZ",
    "IADD3 R4, -R5, RZ, RZ",
    "IMAD R3, R4, R9, R8",
    "ISETP.GE.U32.AND P0, PT, R3, R9, PT",
    "@P0 IADD3 R3, R3, -R9, RZ",
    "@P0 IADD3 R5, R5, 0x1, RZ",
    "ISETP.GE.U32.AND P1, PT, R3, R9, PT",
    "@P1 IADD3 R5, R5, 0x1, RZ",
    "ISETP.NE.U32.AND P2, PT, R9, RZ, PT",
    "@!P2 LOP3.LUT R5, RZ, R9, RZ, 0x33, !PT",
]

# r = x % d (signed), x in R7, d in R6 (sm_90, the order of the fixture's srem).
SIGNED_REMAINDER = [
    "IABS R8, R7",
    "IABS R5, R6",
    "I2F.RP R0, R5",
    "MUFU.RCP R0, R0",
    "VIADD R2, R0, 0xffffffe",
    "F2I.FTZ.U32.TRUNC.NTZ R3, R2",
    "HFMA2.MMA R2, -RZ, RZ, 0, 0",
    "IMAD.MOV R4, RZ, RZ, -R3",
    "IMAD R9, R4, R5, RZ",
    "IMAD.HI.U32 R3, R3, R9, R2",
    "IMAD.HI.U32 R3, R3, R8, RZ",
    "IMAD.MOV R3, RZ, RZ, -R3",
    "IMAD R0, R5, R3, R8",
    "ISETP.GT.U32.AND P0, PT, R5, R0, PT",
    "@!P0 IMAD.IADD R0, R0, 0x1, -R5",
    "ISETP.GE.AND P2, PT, R7, RZ, PT",
    "ISETP.GT.U32.AND P1, PT, R5, R0, PT",
    "@!P1 IADD3 R0, R0, -R5, RZ",
    "ISETP.NE.AND P0, PT, R6, RZ, PT",
    "@!P2 IMAD.MOV R0, RZ, RZ, -R0",
    "@!P0 LOP3.LUT R0, RZ, R6, RZ, 0x33, !PT",
]


def _block(lines):
    function = function_from_sass(SassFunction("k", tuple(
        SassInstruction(16 * k, text) for k, text in enumerate(lines))))
    return function.blocks[0].instructions


def test_unsigned_quotient_is_recognised_after_each_final_step():
    plan = plan_divisions(_block(UNSIGNED))
    # After the second correction and after the d == 0 fix-up, R5 holds x / d.
    assert plan.results == {15: [("R5", "div", "u32", "%dv8_2", "%dv0_1")],
                            17: [("R5", "div", "u32", "%dv8_2", "%dv0_1")]}
    assert plan.copies == {0: [(1, "%dv0_1")], 8: [(2, "%dv8_2")]}


def test_signed_remainder_is_recognised():
    plan = plan_divisions(_block(SIGNED_REMAINDER))
    finals = {row[1:3] for rows in plan.results.values() for row in rows}
    assert finals == {("rem", "s32")}
    assert max(plan.results) == 20


@pytest.mark.parametrize(("position", "text"), [
    (2, "IADD3 R2, R0, 0xfffffff, RZ"),            # another bias: not ptxas's estimate
    (0, "I2F.U32 R0, R9"),                          # rounded to nearest, not up
    (7, "IMAD.HI.U32 R4, R3, R5, RZ"),              # the Newton step without + z
    (13, "@P1 IADD3 R5, R5, 0x1, RZ"),              # a correction under another guard
    (15, "@P1 IADD3 R5, R5, 0x2, RZ"),              # a correction by 2
    (10, "IMAD R3, R4, R9, R7"),                    # remainder of another dividend
    (6, "@P3 IMAD R5, R5, R9, RZ"),                 # a guarded step of the estimate
])
def test_a_sequence_that_deviates_is_not_recognised(position, text):
    lines = list(UNSIGNED)
    lines[position] = text
    plan = plan_divisions(_block(lines))
    assert not plan.results.get(15)


def test_an_intervening_write_of_the_divisor_breaks_the_match():
    lines = list(UNSIGNED)
    lines.insert(9, "MOV R9, 0x7")
    assert not plan_divisions(_block(lines))


def _kernel(lines):
    sass = function_from_sass(
        SassFunction("k", tuple(SassInstruction(16 * k, text) for k, text in
                                enumerate(lines))),
        params=(Param("param_0", "b64", 0), Param("param_1", "b32", 8)),
        directives=(("EIATTR_PARAM_CBANK", (0, 0x210, 12)),))
    lifted = lift_function(sass)
    return analyze_kernel(Module(None, ("sm_90",), 64, (lifted,), None), lifted)


def test_the_quotient_bounds_the_address():
    # p[tid / d] = p[tid + 1024]: with d >= 4 and 256 threads the write stays below 64.
    summary = _kernel([
        "S2R R8, SR_TID.X",
        "LDC R9, c[0x0][0x218]",
        *UNSIGNED,
        "LDC.64 R10, c[0x0][0x210]",
        "IADD3 R12, R8, 0x400, RZ",
        "IMAD.WIDE.U32 R14, R12, 0x4, R10",
        "LDG.E R16, desc[UR4][R14.64]",
        "IMAD.WIDE.U32 R10, R5, 0x4, R10",
        "STG.E desc[UR4][R10.64], R16",
        "EXIT",
    ])
    assert any("/ param_1" in a.address for a in summary.accesses if a.kind == "write")
    base = 0x7F0000000000

    def verdict(d, threads):
        return evaluate(summary.launch_check, struct.pack("<QI", base, d), (1, 1, 1),
                        (threads, 1, 1)).verdict

    assert verdict(4, 256) == "idempotent"
    assert verdict(1, 2048) == "not_idempotent"  # p[1024..] is both read and written
    assert verdict(0, 256) == "not_proven"       # a divisor of 0: the quotient is ~0


def test_without_the_match_the_quotient_is_opaque():
    lines = list(UNSIGNED)
    lines[2] = "IADD3 R2, R0, 0xfffffff, RZ"
    summary = _kernel(["S2R R8, SR_TID.X", "LDC R9, c[0x0][0x218]", *lines,
                       "LDC.64 R10, c[0x0][0x210]", "IADD3 R12, R8, 0x400, RZ",
                       "IMAD.WIDE.U32 R14, R12, 0x4, R10", "LDG.E R16, desc[UR4][R14.64]",
                       "IMAD.WIDE.U32 R10, R5, 0x4, R10", "STG.E desc[UR4][R10.64], R16",
                       "EXIT"])
    assert not any("/" in a.address for a in summary.accesses)
    verdict = evaluate(summary.launch_check, struct.pack("<QI", 0x7F0000000000, 4),
                       (1, 1, 1), (256, 1, 1)).verdict
    assert verdict != "idempotent"
