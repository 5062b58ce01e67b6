"""Which SASS instructions the lifter may leave unlifted (kernelcheck.sass.relevance), and
that leaving them out changes no verdict and can never make one unsound."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import kernelcheck.sass.lift as lift_module
from kernelcheck.analysis.summary import analyze_kernel
from kernelcheck.binary.nvdisasm import SassFunction, SassInstruction
from kernelcheck.ir.nodes import Module, Param
from kernelcheck.sass.analysis import analyze_sass_kernel
from kernelcheck.sass.function import function_from_sass
from kernelcheck.sass.lift import lift_kernel
from kernelcheck.sass.loader import module_from_cubin
from kernelcheck.sass.relevance import irrelevant_instructions

from .conftest import CUBINS, needs_nvdisasm

PARAMS = (("param_0", "b64", 0), ("param_1", "b64", 8), ("param_2", "b32", 16))


def _sass(lines: list[str]):
    return function_from_sass(
        SassFunction("k", tuple(SassInstruction(16 * k, text) for k, text in
                                enumerate(lines))),
        params=tuple(Param(name, kind, offset) for name, kind, offset in PARAMS),
        directives=(("EIATTR_PARAM_CBANK", (0, 0x210, 20)),))


def _dropped(lines: list[str]) -> list[str]:
    sass = _sass(lines)
    return [lines[k] for k in sorted(irrelevant_instructions(sass))]


def _summary(sass, every_instruction: bool = False):
    lifted = lift_kernel(sass, every_instruction=every_instruction).function
    return analyze_kernel(Module(None, ("sm_90",), 64, (lifted,), None), lifted)


# out[tid] = 2 * in[tid] + 1.0 (floats): the math only feeds the stored value.
ELEMENTWISE = [
    "S2R R0, SR_TID.X",
    "LDC.64 R2, c[0x0][0x218]",
    "IMAD.WIDE R2, R0, 0x4, R2",
    "LDG.E R5, desc[UR4][R2.64]",
    "LDC.64 R6, c[0x0][0x210]",
    "FFMA R5, R5, 2, 1",
    "MUFU.RSQ R8, R5",
    "FMUL R5, R5, R8",
    "IMAD.WIDE R6, R0, 0x4, R6",
    "STG.E desc[UR4][R6.64], R5",
    "EXIT",
]


def test_the_math_of_a_stored_value_is_left_unlifted():
    assert _dropped(ELEMENTWISE) == ["FFMA R5, R5, 2, 1", "MUFU.RSQ R8, R5",
                                     "FMUL R5, R5, R8"]


def test_what_computes_an_address_or_a_branch_stays():
    dropped = _dropped([
        "S2R R0, SR_TID.X",
        "LDC.64 R2, c[0x0][0x210]",
        "LDC R4, c[0x0][0x220]",
        "IMAD R5, R0, 0x3, RZ",           # the index: feeds the address
        "LOP3.LUT R6, R0, 0x7, RZ, 0xc0, !PT",
        "ISETP.GE.AND P0, PT, R6, R4, PT",  # the branch condition
        "@P0 EXIT",
        "IMAD.WIDE R2, R5, 0x4, R2",
        "IADD3 R7, R0, 0x1, RZ",           # only stored
        "STG.E desc[UR4][R2.64], R7",
        "EXIT",
    ])
    assert dropped == ["IADD3 R7, R0, 0x1, RZ"]


def test_a_floating_point_compare_needs_none_of_its_operands():
    # The lifter gives FSETP an opaque predicate whatever it compares: the branch it
    # decides is relevant, the value compared is not.
    dropped = _dropped([
        "S2R R0, SR_TID.X",
        "LDC.64 R2, c[0x0][0x210]",
        "I2F R4, R0",
        "FMUL R4, R4, 0.5",
        "FSETP.GT.AND P0, PT, R4, 1, PT",
        "@P0 EXIT",
        "IMAD.WIDE R2, R0, 0x4, R2",
        "STG.E desc[UR4][R2.64], RZ",
        "EXIT",
    ])
    assert dropped == ["I2F R4, R0", "FMUL R4, R4, 0.5"]


def test_a_guarded_write_keeps_the_older_value_relevant():
    # @P0 IADD3 R5 may not run: the IMAD before it still gives the address.
    dropped = _dropped([
        "S2R R0, SR_TID.X",
        "LDC.64 R2, c[0x0][0x210]",
        "ISETP.GE.AND P0, PT, R0, 0x10, PT",
        "IMAD R5, R0, 0x2, RZ",
        "@P0 IADD3 R5, R5, 0x1, RZ",
        "IMAD.WIDE R2, R5, 0x4, R2",
        "STG.E desc[UR4][R2.64], RZ",
        "EXIT",
    ])
    assert dropped == []


def test_what_reads_an_atomic_result_stays():
    # The analysis asks whether an atomic's old value is read at all.
    dropped = _dropped([
        "LDC.64 R2, c[0x0][0x210]",
        "LDC.64 R6, c[0x0][0x218]",
        "MOV R4, 0x1",
        "ATOMG.E.ADD.STRONG.GPU PT, R5, desc[UR4][R2.64], R4",
        "FADD R8, R5, 1",
        "STG.E desc[UR4][R6.64], R8",
        "EXIT",
    ])
    assert dropped == []


def test_an_unknown_call_makes_every_register_relevant():
    dropped = _dropped([
        "S2R R0, SR_TID.X",
        "FMUL R4, R0, 0.5",
        "CALL.ABS.NOINC 0x0",
        "EXIT",
    ])
    assert dropped == []


# out[tid] = in[tid] > 16 ? in[tid] : 3 * in[tid]: the branch only picks how the stored
# value is computed.
BRANCH_ON_DATA = [
    "S2R R0, SR_TID.X",
    "LDC.64 R2, c[0x0][0x210]",
    "LDC.64 R6, c[0x0][0x218]",
    "IMAD.WIDE R6, R0, 0x4, R6",
    "LDG.E R5, desc[UR4][R6.64]",
    "IMAD.WIDE R2, R0, 0x4, R2",
    "ISETP.GT.AND P0, PT, R5, 0x10, PT",
    "@P0 BRA 0x90",
    "IMAD R5, R5, 0x3, RZ",
    "STG.E desc[UR4][R2.64], R5",           # 0x90
    "EXIT",
]


def test_a_branch_that_only_picks_a_stored_value_is_left_to_chance():
    assert _dropped(BRANCH_ON_DATA) == ["ISETP.GT.AND P0, PT, R5, 0x10, PT",
                                        "IMAD R5, R5, 0x3, RZ"]
    sass = _sass(BRANCH_ON_DATA)
    every, sliced = _summary(sass, every_instruction=True), _summary(sass)
    assert sliced.kernel_class == every.kernel_class == "conditional"
    assert sliced.conditions == every.conditions
    assert [(a.kind, a.address, a.guard) for a in sliced.accesses] == [
        (a.kind, a.address, a.guard) for a in every.accesses]


def test_a_branch_that_decides_whether_a_store_runs_stays():
    lines = list(BRANCH_ON_DATA)
    lines[8] = "STG.E desc[UR4][R2.64], RZ"    # skipped when in[tid] > 16
    assert _dropped(lines) == []


def test_a_branch_that_decides_a_relevant_branch_stays():
    # The outer branch (on data) decides whether the inner one (on the thread index) runs,
    # and the inner one whether the store does.
    assert _dropped([
        "S2R R0, SR_TID.X",
        "LDC.64 R2, c[0x0][0x210]",
        "IMAD.WIDE R2, R0, 0x4, R2",
        "LDG.E R5, desc[UR4][R2.64]",
        "ISETP.GT.AND P0, PT, R5, 0x10, PT",
        "@P0 BRA 0x90",
        "ISETP.GT.AND P1, PT, R0, 0x20, PT",
        "@P1 BRA 0x90",
        "STG.E desc[UR4][R2.64], RZ",
        "EXIT",                               # 0x90
    ]) == []


def test_a_loop_that_moves_an_address_stays():
    # The loop on data counts how far the store goes: its test and its step stay.
    assert _dropped([
        "S2R R0, SR_TID.X",
        "LDC.64 R2, c[0x0][0x210]",
        "IMAD.WIDE R2, R0, 0x4, R2",
        "LDG.E R5, desc[UR4][R2.64]",
        "IADD3 R2, P1, R2, 0x4, RZ",          # 0x40
        "IADD3 R5, R5, -0x1, RZ",
        "ISETP.GT.AND P0, PT, R5, RZ, PT",
        "@P0 BRA 0x40",
        "STG.E desc[UR4][R2.64], RZ",
        "EXIT",
    ]) == []


def test_stores_to_shared_and_local_memory_are_left_out():
    assert _dropped([
        "S2R R0, SR_TID.X",
        "LDC.64 R2, c[0x0][0x210]",
        "IMAD.WIDE R2, R0, 0x4, R2",
        "IMAD.SHL.U32 R4, R0, 0x4, RZ",
        "STS [R4], R0",
        "STL [R1+0x8], R0",
        "LDS R6, [R4+0x4]",
        "STG.E desc[UR4][R2.64], R6",
        "EXIT",
    ]) == ["IMAD.SHL.U32 R4, R0, 0x4, RZ", "STS [R4], R0", "STL [R1+0x8], R0",
           "LDS R6, [R4+0x4]"]


def test_matrix_loads_and_stores_of_shared_memory_are_left_out():
    # ldmatrix feeds a tensor-core product whose result is only stored; stmatrix writes
    # shared memory only: neither, nor the shared address they read, decides anything.
    assert _dropped([
        "S2R R0, SR_TID.X",
        "LDC.64 R2, c[0x0][0x210]",
        "IMAD.WIDE R2, R0, 0x4, R2",
        "IMAD.SHL.U32 R4, R0, 0x10, RZ",
        "LDSM.16.M88.4 R8, [R4]",
        "HMMA.16816.F32 R12, R8, R10, RZ",
        "STSM.16.M88.4 [R4+0x200], R8",
        "STG.E desc[UR4][R2.64], R12",
        "EXIT",
    ]) == ["IMAD.SHL.U32 R4, R0, 0x10, RZ", "LDSM.16.M88.4 R8, [R4]",
           "HMMA.16816.F32 R12, R8, R10, RZ", "STSM.16.M88.4 [R4+0x200], R8"]


def test_a_matrix_load_whose_result_gives_an_address_stays_without_its_address():
    # Its result is opaque whatever it reads, so its own address is not relevant.
    assert _dropped([
        "S2R R0, SR_TID.X",
        "LDC.64 R2, c[0x0][0x210]",
        "IMAD.SHL.U32 R4, R0, 0x10, RZ",
        "LDSM.16.M88.4 R8, [R4]",
        "IMAD.WIDE R2, R8, 0x4, R2",
        "STG.E desc[UR4][R2.64], R0",
        "EXIT",
    ]) == ["S2R R0, SR_TID.X", "IMAD.SHL.U32 R4, R0, 0x10, RZ"]


def test_a_load_from_shared_memory_that_gives_an_address_stays():
    assert _dropped([
        "S2R R0, SR_TID.X",
        "LDC.64 R2, c[0x0][0x210]",
        "IMAD.SHL.U32 R4, R0, 0x4, RZ",
        "LDS R6, [R4]",
        "IMAD.WIDE R2, R6, 0x4, R2",
        "STG.E desc[UR4][R2.64], R0",
        "EXIT",
    ]) == []


def test_a_call_that_only_makes_unused_registers_opaque_is_left_out():
    lines = [
        "S2R R0, SR_TID.X",
        "LDC.64 R2, c[0x0][0x210]",
        "IMAD.WIDE R2, R0, 0x4, R2",
        "FSETP.GT.AND P0, PT, R5, 1, PT",
        "@P0 BRA 0x60",
        "CALL.REL.NOINC 0x90",
        "STG.E desc[UR4][R2.64], R5",           # 0x60
        "EXIT",
        "EXIT",
        "FMUL R5, R5, 0.5",                     # 0x90
        "RET.REL.NODEC R20 0x0",
    ]
    sass = _sass(lines)
    dropped = irrelevant_instructions(sass, {5: ()}, {5: ("R5", "P1")})
    assert 5 in dropped and dropped[5] == ("R5", "P1")
    # Where it writes what an address reads, it stays, and so does the branch before it.
    lines[6] = "IMAD.WIDE R2, R5, 0x4, R2"
    lines.insert(7, "STG.E desc[UR4][R2.64], RZ")
    kept = irrelevant_instructions(_sass(lines), {5: ()}, {5: ("R5", "P1")})
    assert 5 not in kept and 3 not in kept


def test_leaving_instructions_out_changes_nothing_the_analysis_reports():
    sass = _sass(ELEMENTWISE)
    every, sliced = _summary(sass, every_instruction=True), _summary(sass)
    assert sliced.kernel_class == every.kernel_class == "conditional"
    assert [(a.kind, a.address) for a in sliced.accesses] == [
        (a.kind, a.address) for a in every.accesses]
    assert len(lift_kernel(sass).function.instructions) < len(
        lift_kernel(sass, every_instruction=True).function.instructions)


def test_a_wrong_answer_costs_precision_never_soundness(monkeypatch):
    # Were the address computation wrongly left out, the store would read an opaque
    # address: a write at an unknown address, never "always".
    lines = [
        "S2R R0, SR_TID.X",
        "LDC.64 R2, c[0x0][0x210]",
        "IMAD.WIDE R2, R0, 0x4, R2",
        "STG.E desc[UR4][R2.64], R0",
        "EXIT",
    ]
    sass = _sass(lines)
    assert _summary(sass).kernel_class == "always"
    wide = next(i for i in sass.instructions if i.opcode == "IMAD")
    monkeypatch.setattr(lift_module, "irrelevant_instructions",
                        lambda function, calls=None, opaque_calls=None: {wide.index: ("R2", "R3")})
    summary = _summary(sass)
    assert summary.kernel_class == "not_proven"
    assert any("unknown address" in reason for reason in summary.reasons)


def test_without_a_fixpoint_what_was_left_out_stays_stale(monkeypatch):
    # When the lift's fixpoint does not settle, every block starts from no facts; a
    # register an unlifted instruction wrote in an earlier block must still read as
    # opaque there.
    lines = [
        "S2R R0, SR_TID.X",
        "LDC.64 R2, c[0x0][0x210]",
        "IMAD.WIDE R2, R0, 0x4, R2",
        "ISETP.GE.AND P0, PT, R0, 0x100, PT",
        "@P0 EXIT",
        "STG.E desc[UR4][R2.64], R0",
        "EXIT",
    ]
    sass = _sass(lines)
    wide = next(i for i in sass.instructions if i.opcode == "IMAD")
    monkeypatch.setattr(lift_module, "irrelevant_instructions",
                        lambda function, calls=None, opaque_calls=None: {wide.index: ("R2", "R3")})
    monkeypatch.setattr(lift_module, "_MAX_PASSES", 1)
    summary = _summary(sass)
    assert summary.kernel_class == "not_proven"
    assert any("unknown address" in reason for reason in summary.reasons)


def _normal(text: str) -> str:
    """A report without the names that count lifted instructions and blocks (they move
    when fewer instructions are lifted)."""
    for pattern, name in ((r"@\d+", "@"), (r"#\d+", "#"), (r"block \d+", "block"),
                          (r"loop\d+:", "loop:"), (r"\bk\d+\b", "k")):
        text = re.sub(pattern, name, text)
    return text


@needs_nvdisasm
@pytest.mark.parametrize("path", CUBINS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_fixture_kernels_get_the_same_report_either_way(path: Path, monkeypatch):
    module = module_from_cubin(path.read_bytes())
    sliced = {k.name: analyze_sass_kernel(module, k) for k in module.kernels}
    monkeypatch.setattr("kernelcheck.sass.analysis.lift_kernel",
                        lambda function, module=None: lift_kernel(function, module, True))
    for kernel in module.kernels:
        every = analyze_sass_kernel(module, kernel)
        mine = sliced[kernel.name]
        assert mine.kernel_class == every.kernel_class, kernel.name
        assert [_normal(r) for r in mine.reasons] == [_normal(r) for r in every.reasons]
        assert [_normal(c) for c in mine.conditions] == [
            _normal(c) for c in every.conditions]
        assert [(a.index, a.kind, _normal(a.address)) for a in mine.accesses] == [
            (a.index, a.kind, _normal(a.address)) for a in every.accesses]
