"""Spill slots of the stack frame read as registers (kernelcheck.sass.frame): a pointer
spilled and loaded back keeps its address, and every case where something else might
reach the frame leaves the code as it is."""

from __future__ import annotations

import doctest
import struct

import pytest

from kernelcheck.binary.nvdisasm import SassFunction, SassInstruction
from kernelcheck.ir.nodes import Module, Param
from kernelcheck.launch.evaluate import evaluate
from kernelcheck.sass import frame
from kernelcheck.sass.analysis import analyze_sass_kernel
from kernelcheck.sass.frame import SLOT_BASE, promote_stack_slots, slot_register
from kernelcheck.sass.function import function_from_sass
from kernelcheck.sass.inline import inline_subroutines

from .conftest import FIXTURES, needs_nvdisasm

BASE = 0x7F0000000000
PARAMS = (Param("param_0", "b64", 0), Param("param_1", "b64", 8), Param("param_2", "b32", 16))


def _function(lines, symbols=None):
    return function_from_sass(
        SassFunction("k", tuple(SassInstruction(16 * k, text) for k, text in
                                enumerate(lines))),
        params=PARAMS, directives=(("EIATTR_PARAM_CBANK", (0, 0x210, 20)),),
        symbols=symbols or {})


def _summary(lines, symbols=None):
    function = _function(lines, symbols)
    return analyze_sass_kernel(Module(None, ("sm_90",), 64, (function,), None), function)


def _verdict(summary, out, src, n):
    return evaluate(summary.launch_check, struct.pack("<QQI", out, src, n), (4, 1, 1),
                    (32, 1, 1)).verdict


# out[tid + 32*i] = src[tid + 32*i] for i < n (at least once), the pointer into out kept in
# the frame: loaded, stored through, advanced and stored back on every iteration.
SPILLED_LOOP = [
    "LDC R1, c[0x0][0x28]",                  # 0x00
    "IADD3 R1, R1, -0x8, RZ",                # 0x10
    "S2R R0, SR_TID.X",                      # 0x20
    "LDC.64 R2, c[0x0][0x210]",              # 0x30
    "IMAD.WIDE.U32 R2, R0, 0x4, R2",         # 0x40
    "STL.64 [R1], R2",                       # 0x50
    "LDC.64 R8, c[0x0][0x218]",              # 0x60
    "IMAD.WIDE.U32 R8, R0, 0x4, R8",         # 0x70
    "MOV R7, RZ",                            # 0x80
    "LDG.E R6, desc[UR4][R8.64]",            # 0x90: loop
    "LDL.64 R4, [R1]",                       # 0xa0
    "STG.E desc[UR4][R4.64], R6",            # 0xb0
    "IADD3 R4, P0, R4, 0x80, RZ",            # 0xc0
    "IADD3.X R5, RZ, R5, RZ, P0, !PT",       # 0xd0
    "STL.64 [R1], R4",                       # 0xe0
    "IADD3 R8, P0, R8, 0x80, RZ",            # 0xf0
    "IADD3.X R9, RZ, R9, RZ, P0, !PT",       # 0x100
    "IADD3 R7, R7, 0x1, RZ",                 # 0x110
    "ISETP.GE.U32.AND P1, PT, R7, c[0x0][0x220], PT",  # 0x120
    "@!P1 BRA 0x90",                         # 0x130
    "EXIT",                                  # 0x140
]


def _unchanged(lines, symbols=None) -> bool:
    inlined = inline_subroutines(_function(lines, symbols))
    return promote_stack_slots(inlined) is inlined


def test_slot_registers_lie_above_the_hardware_registers():
    assert slot_register(0) == f"R{SLOT_BASE}"
    assert slot_register(0x1C) == f"R{SLOT_BASE + 7}"
    assert SLOT_BASE > 255


def test_a_pointer_spilled_through_a_loop_keeps_its_address():
    summary = _summary(SPILLED_LOOP)
    assert summary.kernel_class == "conditional", summary.reasons
    # Two iterations of 32 threads cover 256 bytes of each buffer.
    assert _verdict(summary, BASE + 0x100, BASE, 2) == "idempotent"
    assert _verdict(summary, BASE + 0x4, BASE, 2) == "not_idempotent"
    assert _verdict(summary, BASE + 0x80, BASE, 2) == "not_idempotent"
    assert _verdict(summary, BASE + 0x80, BASE, 1) == "idempotent"


def test_a_pointer_into_the_frame_leaves_the_code_as_it_is():
    lines = SPILLED_LOOP[:9] + ["MOV R10, R1"] + SPILLED_LOOP[9:]
    lines[-2] = "@!P1 BRA 0xa0"
    assert _unchanged(lines)
    summary = _summary(lines)
    assert summary.kernel_class == "not_proven"
    assert any("unknown address" in r for r in summary.reasons)


@pytest.mark.parametrize("change", [
    (13, "IADD3 R1, R1, 0x0, RZ"),                 # the stack pointer moved in the loop
    (5, "STL.U8 [R1], R2"),                        # a byte of a slot
    (5, "STL.64 [R10], R2"),                       # a base other than the stack pointer
    (5, "STL.64 [R1+0x4], R2"),                    # an 8-byte access not 8-aligned
    (5, "STL.64 [R1], R0"),                        # the stack pointer stored (R0:R1)
    (8, "LDC R7, c[0x0][0x28]"),                   # the frame's address read again
    (8, "LDC R7, c[0x0][R0+0x210]"),               # bank 0 read at a register index
    (8, "UNKNOWNOP R1, R7"),                       # an instruction naming the stack pointer
    (1, "@P2 IADD3 R1, R1, -0x8, RZ"),             # a guarded frame
])
def test_each_rule_refuses_the_rewrite(change):
    at, text = change
    lines = list(SPILLED_LOOP)
    lines[at] = text
    assert _unchanged(lines)


def test_a_kernel_without_local_accesses_is_not_touched():
    assert _unchanged(["S2R R0, SR_TID.X", "EXIT"])


def test_a_last_use_load_leaves_the_slot_unknown():
    # The first load sees the stored pointer; after LDL.LU the word may be dropped, so a
    # second load of it is an unknown value.
    head = SPILLED_LOOP[:6]
    known = _summary(head + ["LDL.LU.64 R4, [R1]", "STG.E desc[UR4][R4.64], RZ", "EXIT"])
    assert known.kernel_class == "always", known.reasons
    reloaded = _summary(head + ["LDL.LU.64 R4, [R1]", "LDL.64 R10, [R1]",
                                "STG.E desc[UR4][R10.64], RZ", "EXIT"])
    assert reloaded.kernel_class == "not_proven"
    assert any("unknown address" in r for r in reloaded.reasons)


def test_wide_accesses_become_copies_of_aligned_pairs():
    lines = SPILLED_LOOP[:2] + ["STL.128 [R1], R4", "LDL.128 R8, [R1]", "EXIT"]
    inlined = inline_subroutines(_function(lines))
    body = promote_stack_slots(inlined).function.instructions
    copies = [(i.full_opcode, i.operands[0].name, i.operands[1].name) for i in body[2:6]]
    assert copies == [("MOV.64", slot_register(0), "R4"), ("MOV.64", slot_register(8), "R6"),
                      ("MOV.64", "R8", slot_register(0)), ("MOV.64", "R10", slot_register(8))]


def test_indices_follow_the_longer_code():
    # A 16-byte spill becomes two copies: the summarised call after it moves by one, and
    # every instruction still names the instruction of the listing it came from.
    lines = [
        "LDC R1, c[0x0][0x28]",                  # 0x00
        "IADD3 R1, R1, -0x10, RZ",               # 0x10
        "S2R R0, SR_TID.X",                      # 0x20
        "STL.128 [R1], R4",                      # 0x30
        "MOV R20, 0x60",                         # 0x40
        "CALL.REL.NOINC $k$f",                   # 0x50
        "LDC.64 R2, c[0x0][0x210]",              # 0x60
        "IMAD.WIDE.U32 R2, R0, 0x4, R2",         # 0x70
        "LDL R5, [R1+0x4]",                      # 0x80
        "STG.E desc[UR4][R2.64], R5",            # 0x90
        "EXIT",                                  # 0xa0
        "IADD3 R9, R0, 0x1, RZ",                 # 0xb0: $k$f
        "RET.REL.NODEC R20 k",                   # 0xc0
    ]
    symbols = {"$k$f": 0xB0}
    inlined = inline_subroutines(_function(lines, symbols))
    promoted = promote_stack_slots(inlined)
    assert promoted is not inlined
    body = promoted.function.instructions
    assert len(body) == len(inlined.function.instructions) + 1
    calls = [i.index for i in body if i.opcode == "CALL"]
    assert list(promoted.summarized) == calls
    assert promoted.summarized[calls[0]] == inlined.summarized[calls[0] - 1]
    for instr in body:
        source = inlined.function.instructions[
            inlined.origin.index(promoted.origin[instr.index])]
        if instr.opcode not in ("MOV",) or source.opcode == "MOV":
            assert source.opcode == instr.opcode
        else:
            assert source.opcode in ("STL", "LDL")
    summary = _summary(lines, symbols)
    assert summary.kernel_class == "always", summary.reasons


def test_a_subroutine_writing_the_frame_leaves_the_code_as_it_is():
    lines = [
        "LDC R1, c[0x0][0x28]",                  # 0x00
        "IADD3 R1, R1, -0x10, RZ",               # 0x10
        "STL [R1], R4",                          # 0x20
        "MOV R20, 0x50",                         # 0x30
        "CALL.REL.NOINC $k$f",                   # 0x40
        "EXIT",                                  # 0x50
        "STL [R1+0x4], R9",                      # 0x60: $k$f
        "RET.REL.NODEC R20 k",                   # 0x70
    ]
    assert _unchanged(lines, {"$k$f": 0x60})


def test_docstring_examples():
    result = doctest.testmod(frame)
    assert result.attempted > 0 and result.failed == 0


@needs_nvdisasm
def test_the_spills_ptxas_writes_are_promoted_and_change_no_verdict(monkeypatch):
    # fixtures/src/sass/spills.cu: 69 spill instructions (STL, LDL, LDL.LU). The promoted
    # kernel keeps only the loads that make a slot unknown after a last use, and its class
    # and instance verdicts are those of the kernel read with its frame as memory.
    import tomllib

    from kernelcheck.sass import lift as lift_module
    from kernelcheck.sass.loader import load_cubin_sass
    from tests.analysis.test_fixtures import param_bytes

    path = FIXTURES / "sass" / "sm_90" / "spills.cubin"
    image = load_cubin_sass(path.read_bytes(), str(path))
    kernel = image.module.kernels[0]
    inlined = inline_subroutines(kernel)
    promoted = promote_stack_slots(inlined).function
    assert sum(i.opcode in ("LDL", "STL") for i in inlined.function.instructions) > 50
    assert not any(i.opcode == "STL" for i in promoted.instructions)
    assert all(int(i.operands[0].name[1:]) >= SLOT_BASE
               for i in promoted.instructions if i.opcode == "LDL")
    expected = tomllib.loads((FIXTURES / "sass" / "expected.toml").read_text())[
        "kernels"]["spill_sum"]

    def verdicts():
        summary = analyze_sass_kernel(image.module, kernel)
        return summary.kernel_class, [evaluate(
            summary.launch_check, param_bytes(kernel, i, expected["param_names"]), i["grid"],
            i["block"]).verdict for i in expected["instances"]]

    promoted_verdicts = verdicts()
    monkeypatch.setattr(lift_module, "promote_stack_slots", lambda inlined: inlined)
    assert verdicts() == promoted_verdicts
    assert promoted_verdicts[0] == "conditional"
    assert all(v != "idempotent" for v, i in zip(
        promoted_verdicts[1], expected["instances"], strict=True)
        if i["verdict"] == "not_idempotent")


@needs_nvdisasm
def test_the_register_filter_gives_the_rules_answer_on_every_fixture_kernel(monkeypatch):
    # The check of the rules skips instructions that name neither R0, R1 nor a constant;
    # with every instruction looked at in full it must answer the same, kernel by kernel.
    from kernelcheck.sass.loader import load_cubin_sass

    checked = 0
    for path in sorted((FIXTURES / "sass" / "sm_90").glob("*.cubin")):
        image = load_cubin_sass(path.read_bytes(), str(path))
        for kernel in image.module.kernels:
            inlined = inline_subroutines(kernel)
            if not any(i.opcode in ("LDL", "STL") for i in inlined.function.instructions):
                continue
            fast = frame._promotable(inlined.function, inlined.summarized)
            with monkeypatch.context() as patch:
                patch.setattr(frame, "_may_name_stack_pointer", lambda instr: True)
                full = frame._promotable(inlined.function, inlined.summarized)
            assert fast == full, kernel.name
            checked += 1
    assert checked >= 1  # spill_sum (fixtures/src/sass/spills.cu)
