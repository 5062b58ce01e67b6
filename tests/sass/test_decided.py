"""Kernels whose class one global atomic decides: the early answer is the analysis's answer
and the hand-labelled truth on every fixture kernel it gives one for, and only global
atomics that are not idempotent in effect decide."""

from __future__ import annotations

import json
import tomllib

import pytest

from kernelcheck.analysis.summary import analyze_kernel
from kernelcheck.ir.nodes import Function, Guard, Instruction, Param, Register
from kernelcheck.launch.evaluate import evaluate
from kernelcheck.sass.decided import decided_summary, deciding_atomics
from tests.sass.conftest import CUBINS, FIXTURES, needs_nvdisasm
from tests.sass.test_analysis import lifted

EXPECTED = tomllib.loads((FIXTURES / "expected.toml").read_text())["kernels"]


@needs_nvdisasm
def test_early_class_is_the_analysis_class_on_every_fixture():
    decided = 0
    for path in CUBINS:
        lifted_module, image = lifted(path)
        for function in image.module.kernels:
            summary = decided_summary(function)
            if summary is None:
                continue
            decided += 1
            full = analyze_kernel(lifted_module, lifted_module.get_function(function.name))
            assert summary.kernel_class == "never"
            assert full.kernel_class == "never", (path.name, function.name, full.reasons)
            assert EXPECTED[function.name]["class"] == "never", function.name
    # The atomics fixtures (add, inc, CAS loops, float adds) on both architectures.
    assert decided >= 8


@needs_nvdisasm
def test_early_summary_names_each_atomic_and_never_answers_idempotent():
    path = next(p for p in CUBINS if p.parent.name == "sm_90" and p.stem == "atomics")
    _, image = lifted(path)
    function = image.module.get_function("atomic_add_all")
    summary = decided_summary(function)
    *sites, note = summary.reasons
    assert sites and all("REDG" in r and "/*" in r for r in sites)
    assert "not analysed" in note
    assert [a.kind for a in summary.accesses] == ["atomic"] * len(sites)
    # No launch check was built: any instance is not proven, never idempotent.
    verdict = evaluate(summary.launch_check, bytes(function.param_size), (4, 1, 1),
                       (128, 1, 1))
    assert verdict.verdict == "not_proven"
    assert "not analysed" in verdict.detail


def _kernel(*instructions: Instruction) -> Function:
    body = tuple(Instruction(i.opcode, i.modifiers, i.operands, i.guard, index=k)
                 for k, i in enumerate(instructions))
    return Function("k", "entry", (Param("p", "u64", 0, 8),), body=body)


def _atomic(opcode: str, *modifiers: str, guard: Guard | None = None) -> Instruction:
    return Instruction(opcode, ("E",) + modifiers + ("STRONG", "GPU"),
                       (Register("R2"), Register("R4")), guard)


@pytest.mark.parametrize("instruction, decides", [
    (_atomic("REDG", "ADD", "F32", "FTZ", "RN"), True),
    (_atomic("ATOMG", "CAS"), True),
    (_atomic("ATOMG", "INC"), True),
    (_atomic("ATOMG", "XOR"), True),
    # Idempotent in effect, or decided by the value exchanged: the analysis decides.
    (_atomic("REDG", "MAX", "S32"), False),
    (_atomic("ATOMG", "EXCH"), False),
    # Generic atomics may address shared memory; ATOMS does.
    (_atomic("ATOM", "ADD"), False),
    (_atomic("RED", "ADD"), False),
    (Instruction("ATOMS", ("ADD",), (Register("R2"), Register("R4"))), False),
    # Never runs.
    (_atomic("REDG", "ADD", guard=Guard("PT", negated=True)), False),
    # Runs when P0 holds: counted (the class is per kernel, not per launch).
    (_atomic("REDG", "ADD", guard=Guard("P0")), True),
    # Bulk reductions: a shared-memory block added into global memory (PyTorch's
    # tma_scatter_add_kernel); into shared memory, or a max, the analysis decides.
    (Instruction("UBLKRED", ("G", "S", "ADD", "F32", "RN"),
                 (Register("UR4"), Register("UR6"), Register("R5"))), True),
    (Instruction("UBLKRED", ("S", "S", "ADD", "F32", "RN"),
                 (Register("UR4"), Register("UR6"), Register("R5"))), False),
    (Instruction("UBLKRED", ("G", "S", "MAX", "S32"),
                 (Register("UR4"), Register("UR6"), Register("R5"))), False),
    (Instruction("UTMAREDG", ("2D", "ADD"), (Register("UR4"), Register("UR8"))), True),
])
def test_which_atomics_decide(instruction, decides):
    function = _kernel(Instruction("EXIT"), instruction)
    assert bool(deciding_atomics(function)) is decides
    assert (decided_summary(function) is not None) is decides


@needs_nvdisasm
def test_library_report_gives_the_same_classes_with_and_without_early_verdicts(tmp_path,
                                                                              capsys):
    from kernelcheck.cli import main

    cubin = str(FIXTURES / "cubin" / "sm_90" / "atomics.cubin")
    runs = {}
    said = {}
    for flag in ([], ["--no-early-verdicts"]):
        out = tmp_path / f"out{len(flag)}.jsonl"
        assert main(["analyze", cubin, "--format", "jsonl", "-o", str(out), *flag]) == 0
        runs[bool(flag)] = {r["kernel"]: r for r in map(json.loads,
                                                         out.read_text().splitlines())}
        said[bool(flag)] = capsys.readouterr().err
    assert "4 kernel(s) have a global atomic add, inc, dec, xor or CAS" in said[False]
    assert "global atomic" not in said[True]
    early, whole = runs[False], runs[True]
    assert {k: r["class"] for k, r in early.items()} == {
        k: r["class"] for k, r in whole.items()}
    decided = [k for k, r in early.items() if "not analysed" in " ".join(r["reasons"])]
    assert sorted(decided) == ["atomic_add_all", "atomic_inc_ticket", "atomic_sub_budget",
                               "cas_add_f64"]
    assert not any("not analysed" in " ".join(r["reasons"]) for r in whole.values())


def test_docstring_example():
    import doctest

    import kernelcheck.sass.decided as decided

    result = doctest.testmod(decided)
    assert result.attempted > 0 and result.failed == 0
