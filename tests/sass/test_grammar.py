"""The SASS instruction grammar: operand forms nvdisasm prints, and errors with positions."""

from __future__ import annotations

import math

import pytest

from kernelcheck.errors import SassSyntaxError
from kernelcheck.ir.nodes import (
    ConstantRef,
    DescriptorRef,
    Guard,
    Immediate,
    Instruction,
    MemoryRef,
    ModifiedOperand,
    NegatedPredicate,
    Register,
    SpecialRegister,
    Symbol,
    VectorOperand,
)
from kernelcheck.sass.grammar import parse_instruction_text
from kernelcheck.sass.printer import format_sass_instruction

R = Register


@pytest.mark.parametrize(("text", "guard", "opcode", "modifiers", "operands"), [
    ("@!P0 LDG.E.128.CONSTANT R4, desc[UR6][R2.64+0x10]", Guard("P0", True), "LDG",
     ("E", "128", "CONSTANT"),
     (R("R4"), MemoryRef(R("R2"), 0x10, wide=True, descriptor=R("UR6")))),
    ("@UP0 ULDC.64 UR4, c[0x0][0x218]", Guard("UP0"), "ULDC", ("64",),
     (R("UR4"), ConstantRef(0, 0x218))),
    ("LDC R7, c[0x0][RZ]", None, "LDC", (), (R("R7"), ConstantRef(0, 0, R("RZ")))),
    ("ULDC UR4, cx[UR5][0x10]", None, "ULDC", (), (R("UR4"), ConstantRef(R("UR5"), 0x10))),
    ("IADD3.X R3, R0, UR5, RZ, P0, !PT", None, "IADD3", ("X",),
     (R("R3"), R("R0"), R("UR5"), R("RZ"), R("P0"), NegatedPredicate(R("PT")))),
    ("HFMA2.MMA R7, -RZ, RZ, 1.75, -0x1", None, "HFMA2", ("MMA",),
     (R("R7"), ModifiedOperand(R("RZ"), negate=True), R("RZ"), Immediate(1.75, "float"),
      Immediate(-1))),
    ("FADD R1, -|R2|, ~R3.reuse", None, "FADD", (),
     (R("R1"), ModifiedOperand(R("R2"), negate=True, absolute=True),
      ModifiedOperand(R("R3"), invert=True, suffixes=("reuse",)))),
    ("HFMA2 R5, R2.H0_H0, c[0x0][0x178].H1_H1, R5", None, "HFMA2", (),
     (R("R5"), ModifiedOperand(R("R2"), suffixes=("H0_H0",)),
      ModifiedOperand(ConstantRef(0, 0x178), suffixes=("H1_H1",)), R("R5"))),
    ("STS [R9.X4+0xc], R4", None, "STS", (), (MemoryRef(R("R9"), 0xc, scale=4), R("R4"))),
    ("ATOMS.POPC.INC.32 RZ, [R4+URZ]", None, "ATOMS", ("POPC", "INC", "32"),
     (R("RZ"), MemoryRef(R("R4"), uniform=R("URZ")))),
    ("LDG.E R4, [R2.64+-0x4]", None, "LDG", ("E",), (R("R4"), MemoryRef(R("R2"), -4, True))),
    ("LDS R0, [UR4+0x10]", None, "LDS", (), (R("R0"), MemoryRef(R("UR4"), 0x10))),
    ("S2R R2, SR_TID.X", None, "S2R", (), (R("R2"), SpecialRegister("SR_TID.X"))),
    ("CALL.REL.NOINC $k$_Z6add_toPfif", None, "CALL", ("REL", "NOINC"),
     (Symbol("$k$_Z6add_toPfif"),)),
    ("BRA `(.L_x_12)", None, "BRA", (), (Symbol(".L_x_12"),)),
    ("BRA 0x180", None, "BRA", (), (Immediate(0x180),)),
    ("UTMALDG.2D [UR8], [UR4], desc[UR10]", None, "UTMALDG", ("2D",),
     (MemoryRef(R("UR8")), MemoryRef(R("UR4")), DescriptorRef("desc", (R("UR10"),)))),
    ("TEX.SCR.LL R4, R4, R6, 0x0, 0x5a, 2D, 0x1", None, "TEX", ("SCR", "LL"),
     (R("R4"), R("R4"), R("R6"), Immediate(0), Immediate(0x5a), Symbol("2D"), Immediate(1))),
    # Seen in libtorch_cuda.so (CUTLASS sm_90 kernels): a scoreboard set.
    ("DEPBAR {5,4,3,2,1,0}", None, "DEPBAR", (),
     (VectorOperand(tuple(Immediate(k) for k in (5, 4, 3, 2, 1, 0))),)),
    ("FSEL R0, R1, -INF, P0", None, "FSEL", (),
     (R("R0"), R("R1"), Immediate(-math.inf, "float"), R("P0"))),
])
def test_operand_forms(text, guard, opcode, modifiers, operands):
    parts = parse_instruction_text(text)
    assert (parts.guard, parts.opcode, parts.modifiers, parts.operands) == (
        guard, opcode, modifiers, operands)
    # The printer writes text that parses back to the same parts.
    again = parse_instruction_text(format_sass_instruction(
        Instruction(parts.opcode, parts.modifiers, parts.operands, parts.guard)))
    assert again == parts


@pytest.mark.parametrize(("text", "column", "expected_token"), [
    ("LDG.E R0, [R2.64+", 18, "HEX"),
    ("IADD3 R0, R1, %r2, RZ", 15, "NAME"),
    ("@P0", 4, "OPCODE"),
    ("STG.E desc[UR4][R2.64, R5", 22, "']'"),
])
def test_syntax_errors_point_at_the_column_and_list_expected_tokens(
        text, column, expected_token):
    with pytest.raises(SassSyntaxError) as caught:
        parse_instruction_text(text, filename="k.sass", line=7)
    error = caught.value
    assert (error.filename, error.line, error.column) == ("k.sass", 7, column)
    assert expected_token in error.expected
    assert error.excerpt().splitlines()[1].index("^") == column - 1


@pytest.mark.parametrize("text", ["ST.E [R2+R3], R4", "LDG.E R0, q[R2][R3]",
                                  "LDC R0, c[0x0][R1+R2]"])
def test_semantically_malformed_operands_are_syntax_errors(text):
    with pytest.raises(SassSyntaxError, match="k.sass:3:"):
        parse_instruction_text(text, filename="k.sass", line=3)
