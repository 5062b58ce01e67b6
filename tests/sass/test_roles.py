"""Operand roles of SASS instructions (kernelcheck.ir.operands, SASS branch)."""

from __future__ import annotations

import pytest

from kernelcheck.ir.nodes import Instruction
from kernelcheck.ir.operands import access_kind, access_width, defs, memory_space, uses
from kernelcheck.sass.grammar import parse_instruction_text


def _instr(text: str) -> Instruction:
    parts = parse_instruction_text(text)
    return Instruction(parts.opcode, parts.modifiers, parts.operands, parts.guard)


@pytest.mark.parametrize(("text", "written", "read"), [
    ("IMAD.WIDE R2, R5, 0x4, R6", ("R2", "R3"), ("R5", "R6", "R7")),
    ("IMAD.WIDE.U32 R2, R5, UR4, RZ", ("R2", "R3"), ("R5", "UR4")),
    ("ISETP.GE.U32.AND P0, PT, R2, UR4, PT", ("P0",), ("R2", "UR4")),
    ("IADD3 R2, P0, R4, UR4, RZ", ("R2", "P0"), ("R4", "UR4")),
    ("IADD3.X R3, R0, UR5, RZ, P0, !PT", ("R3",), ("R0", "UR5", "P0")),
    ("@!P1 LDG.E.64 R4, desc[UR4][R2.64+0x8]", ("R4", "R5"), ("P1", "UR4", "UR5", "R2", "R3")),
    ("STG.E.128 desc[UR4][R2.64], R8", (), ("UR4", "UR5", "R2", "R3", "R8", "R9", "R10", "R11")),
    ("ULDC.64 UR4, c[0x0][0x218]", ("UR4", "UR5"), ()),
    ("SHFL.DOWN PT, R3, R2, 0x10, 0x1f", ("R3",), ("R2",)),
    ("ATOMG.E.CAS.64.STRONG.GPU PT, R6, [R2.64], R4, R8",
     ("R6", "R7"), ("R2", "R3", "R4", "R5", "R8", "R9")),
    ("DADD R4, R2, R6", ("R4", "R5"), ("R2", "R3", "R6", "R7")),
    ("F2F.F64.F32 R4, R2", ("R4", "R5"), ("R2",)),
    ("F2F.F32.F64 R4, R2", ("R4",), ("R2", "R3")),
    ("LDS R5, [R7.X4+UR4+0x10]", ("R5",), ("R7", "UR4")),
    ("BSSY B0, 0x1f0", ("B0",), ()),
    ("BSYNC B0", (), ("B0",)),
    ("MOV R0, RZ", ("R0",), ()),
    ("@PT EXIT", (), ()),
    ("LDC R7, c[0x0][R2+0x10]", ("R7",), ("R2",)),
])
def test_defs_and_uses(text, written, read):
    instr = _instr(text)
    assert defs(instr) == written
    assert uses(instr) == read


@pytest.mark.parametrize(("text", "space", "kind", "width"), [
    ("LDG.E.128.CONSTANT R4, desc[UR4][R2.64]", "global", "read", 16),
    ("STG.E.U8 desc[UR4][R2.64], R0", "global", "write", 1),
    ("REDG.E.ADD.F32.FTZ.RN.STRONG.GPU desc[UR4][R2.64], R7", "global", "atomic", 4),
    ("RED.E.ADD.STRONG.GPU [R2.64], R5", "generic", "atomic", 4),
    ("ATOMS.POPC.INC.32 RZ, [R4+URZ]", "shared", "atomic", 4),
    ("STS.64 [R2], R4", "shared", "write", 8),
    ("LDC.64 R2, c[0x0][0x218]", "const", "read", 8),
    ("IADD3 R0, R1, R2, RZ", None, None, None),
])
def test_memory_space_kind_and_width(text, space, kind, width):
    instr = _instr(text)
    assert (memory_space(instr), access_kind(instr), access_width(instr)) == (
        space, kind, width)


def test_unknown_opcodes_are_marked_and_defs_are_may_defs():
    from kernelcheck.sass.function import build_function

    function = build_function("k", [(0, "HMMA.16816.F32 R4, R8, R12, R4"), (16, "EXIT")])
    assert function.instructions[0].known is False
    assert defs(function.instructions[0]) == ("R4",)


def test_p2r_reads_every_predicate():
    from kernelcheck.sass.function import build_function

    # As the nvdisasm reader gives it from -json too (tests/sass/test_speed_nvdisasm.py).
    function = build_function("k", [(0, "P2R R23, PR, RZ, 0x4"), (16, "R2P PR, R9, 0x6"),
                                     (32, "EXIT")])
    p2r, r2p = function.instructions[:2]
    assert (p2r.opcode, p2r.guard) == ("P2R", None)
    assert defs(p2r) == ("R23",)
    assert uses(p2r) == tuple(f"P{k}" for k in range(7))
    assert defs(r2p) == tuple(f"P{k}" for k in range(7)) and uses(r2p) == ("R9",)
