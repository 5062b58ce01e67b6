"""The control-flow graph of SASS functions (kernelcheck.sass.cfg): an indirect branch goes
to the targets the image lists for it, and the corpus run reads such kernels."""

from __future__ import annotations

import doctest

from kernelcheck.binary.nvdisasm import SassFunction, SassInstruction
from kernelcheck.corpus import analyse_image, plan_jobs
from kernelcheck.ir.cfg import EXIT
from kernelcheck.ir.loops import natural_loops
from kernelcheck.sass import cfg
from kernelcheck.sass.calls import BRANCH_TARGETS_DIRECTIVE, branch_targets
from kernelcheck.sass.function import function_from_sass, label_for_offset
from kernelcheck.sass.loader import load_cubin_sass

from .conftest import FIXTURES, needs_nvdisasm

SWITCH = FIXTURES / "sass" / "sm_90" / "indirect_branch.cubin"


def _function(lines, branches):
    labels = {t: (label_for_offset(t),) for _, targets in branches for t in targets}
    return function_from_sass(
        SassFunction("k", tuple(SassInstruction(16 * k, text) for k, text in
                                enumerate(lines))),
        directives=((BRANCH_TARGETS_DIRECTIVE, branches),), labels=labels)


def test_docstring_examples():
    result = doctest.testmod(cfg)
    assert result.attempted > 0 and result.failed == 0


def test_a_loop_closed_by_an_indirect_branch_is_a_loop():
    # The jump table sends the thread back to the head (0x10) or on to the exit (0x40).
    function = _function([
        "S2R R0, SR_TID.X",                  # 0x00
        "IADD3 R0, R0, 0x1, RZ",             # 0x10: head
        "LDC R4, c[0x2][R0]",                # 0x20
        "BRX R4 -0x40",                      # 0x30
        "EXIT",                              # 0x40
    ], ((0x30, (0x10, 0x40)),))
    graph = cfg.control_flow_graph(function)
    branch = next(b for b in function.blocks if b.last.opcode == "BRX")
    assert set(graph.successors(branch.index)) == {branch.index, branch.index + 1}
    assert [loop.header for loop in natural_loops(graph)] == [branch.index]


def test_an_indirect_branch_without_targets_may_go_anywhere():
    function = _function(["LDC R4, c[0x2][0x0]", "BRX R4 -0x20", "EXIT"], ())
    graph = cfg.control_flow_graph(function)
    assert set(graph.successors(0)) == {b.index for b in function.blocks}
    assert graph.has_edge(1, EXIT)


@needs_nvdisasm
def test_the_jump_tables_of_a_switch_go_to_their_listed_targets():
    image = load_cubin_sass(SWITCH.read_bytes(), str(SWITCH))
    function = image.module.kernels[0]
    graph = cfg.control_flow_graph(function)
    start = {label: b.index for b in function.blocks for label in b.labels}
    jumps = [b for b in function.blocks if b.last is not None and b.last.opcode == "BRX"]
    assert len(jumps) >= 4
    for block in jumps:
        listed = branch_targets(function, block.last)
        assert listed
        assert set(graph.successors(block.index)) == {
            start[label_for_offset(t)] for t in listed}


@needs_nvdisasm
def test_the_corpus_run_analyses_a_kernel_with_jump_tables():
    jobs, errors = plan_jobs(str(SWITCH))
    assert not errors
    records, _ = analyse_image(jobs[0], "analysis", {})
    (record,) = records
    assert record.status == "ok", record.error
    assert record.analysis["class"] == "conditional"
    assert record.loops == 0
