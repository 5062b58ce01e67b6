"""Control-flow graphs of fixture kernels and of hand-written PTX, edge by edge.

Expected edges were read off the PTX in fixtures/ptx/sm_90: blocks entered only by
fall-through are named ``$bb<index>``, the others by their label.
"""

from __future__ import annotations

import networkx as nx
import pytest

from kernelcheck.errors import UnsupportedFeature
from kernelcheck.ir.cfg import (
    ENTRY,
    EXIT,
    block_of_label,
    control_flow_graph,
    instruction_blocks,
    unreachable_blocks,
)

from .conftest import FIXTURES, _module, fixture_function, named_edges, snippet

B, F, X = "branch", "fallthrough", "exit"

FIXTURE_EDGES = {
    # A grid-stride loop behind an n > first-index guard.
    ("gridstride", "scale_gridstride"): {
        (ENTRY, "$bb0", F), ("$bb0", "$L__BB0_3", B), ("$bb0", "$bb1", F),
        ("$bb1", "$L__BB0_2", F), ("$L__BB0_2", "$L__BB0_2", B),
        ("$L__BB0_2", "$L__BB0_3", F), ("$L__BB0_3", EXIT, X),
    },
    # Two early returns (both branch to the shared ret block).
    ("misc", "early_return_masked"): {
        (ENTRY, "$bb0", F), ("$bb0", "$L__BB0_3", B), ("$bb0", "$bb1", F),
        ("$bb1", "$L__BB0_3", B), ("$bb1", "$bb2", F), ("$bb2", "$L__BB0_3", F),
        ("$L__BB0_3", EXIT, X),
    },
    # Shared-memory tree reduction: a loop over strides between two bar.sync.
    ("reduction", "reduce_sum_block"): {
        (ENTRY, "$bb0", F), ("$bb0", "$L__BB0_2", B), ("$bb0", "$bb1", F),
        ("$bb1", "$L__BB0_2", F), ("$L__BB0_2", "$L__BB0_6", B),
        ("$L__BB0_2", "$L__BB0_3", F), ("$L__BB0_3", "$L__BB0_5", B),
        ("$L__BB0_3", "$bb4", F), ("$bb4", "$L__BB0_5", F), ("$L__BB0_5", "$L__BB0_3", B),
        ("$L__BB0_5", "$L__BB0_6", F), ("$L__BB0_6", "$L__BB0_8", B),
        ("$L__BB0_6", "$bb7", F), ("$bb7", "$L__BB0_8", F), ("$L__BB0_8", EXIT, X),
    },
    # Unguarded bra.uni has no fall-through; block order differs from label order.
    ("stencil", "jacobi_pingpong"): {
        (ENTRY, "$bb0", F), ("$bb0", "$L__BB1_4", B), ("$bb0", "$bb1", F),
        ("$bb1", "$L__BB1_3", B), ("$bb1", "$bb2", F), ("$bb2", "$L__BB1_2", B),
        ("$L__BB1_3", "$L__BB1_4", B), ("$L__BB1_2", "$L__BB1_4", F),
        ("$L__BB1_4", EXIT, X),
    },
    # A CAS retry loop: a self loop.
    ("atomics", "cas_add_f64"): {
        (ENTRY, "$bb0", F), ("$bb0", "$L__BB3_3", B), ("$bb0", "$bb1", F),
        ("$bb1", "$L__BB3_2", F), ("$L__BB3_2", "$L__BB3_2", B),
        ("$L__BB3_2", "$L__BB3_3", F), ("$L__BB3_3", EXIT, X),
    },
    ("misc", "empty_kernel"): {(ENTRY, "$bb0", F), ("$bb0", EXIT, X)},
    ("elementwise", "vec_add"): {
        (ENTRY, "$bb0", F), ("$bb0", "$L__BB0_2", B), ("$bb0", "$bb1", F),
        ("$bb1", "$L__BB0_2", F), ("$L__BB0_2", EXIT, X),
    },
}


@pytest.mark.parametrize(("where", "expected"), FIXTURE_EDGES.items(),
                         ids=[k[1] for k in FIXTURE_EDGES])
def test_fixture_cfg_edges(where, expected):
    ptx, kernel = where
    function = fixture_function(kernel, ptx)
    cfg = control_flow_graph(function)
    assert named_edges(function, cfg) == expected
    assert unreachable_blocks(cfg) == ()
    assert all(cfg.nodes[b.index]["block"] is b for b in function.blocks)


def test_every_sm90_kernel_reaches_exit_from_every_block():
    for path in sorted((FIXTURES / "sm_90").glob("*.ptx")):
        for function in _module(str(path)).functions:
            if function.body is None:
                continue
            cfg = control_flow_graph(function)
            assert set(cfg) == {ENTRY, EXIT, *range(len(function.blocks))}
            blocks = set(range(len(function.blocks))) - set(unreachable_blocks(cfg))
            reaching_exit = nx.ancestors(cfg, EXIT)
            assert blocks <= reaching_exit, (path.name, function.name)


def test_guarded_branch_to_next_block_is_both_branch_and_fallthrough():
    function = snippet(".reg .pred %p1; @%p1 bra L; L: ret;")
    cfg = control_flow_graph(function)
    assert cfg.edges[0, 1]["kind"] == "branch"
    assert set(cfg.edges[0, 1]["kinds"]) == {"branch", "fallthrough"}


def test_guarded_ret_and_trap():
    function = snippet(".reg .pred %p<3>; @%p1 ret; @%p2 trap; trap; ret;")
    cfg = control_flow_graph(function)
    assert named_edges(function, cfg) == {
        (ENTRY, "$bb0", F), ("$bb0", EXIT, X), ("$bb0", "$bb1", F),
        ("$bb1", EXIT, X), ("$bb1", "$bb2", F), ("$bb2", EXIT, X), ("$bb3", EXIT, X),
    }
    assert unreachable_blocks(cfg) == (3,)


def test_unreachable_block_and_infinite_loop():
    function = snippet("""
    .reg .pred %p1; .reg .b32 %r<3>;
    setp.eq.s32 %p1, %r1, 0;
    @%p1 bra SPIN;
    ret;
    DEAD: add.s32 %r1, %r1, 1;
    ret;
    SPIN: add.s32 %r2, %r2, 1;
    bra.uni SPIN;
    """)
    cfg = control_flow_graph(function)
    assert named_edges(function, cfg) == {
        (ENTRY, "$bb0", F), ("$bb0", "SPIN", B), ("$bb0", "$bb1", F), ("$bb1", EXIT, X),
        ("DEAD", EXIT, X), ("SPIN", "SPIN", B),
    }
    assert unreachable_blocks(cfg) == (block_of_label(function)["DEAD"],)


def test_brx_idx_goes_to_every_listed_target():
    function = snippet("""
    .reg .b32 %r<2>;
    ts: .branchtargets A, B, C;
    brx.idx %r1, ts;
    A: ret;
    B: ret;
    C: bra.uni A;
    """)
    assert named_edges(function) == {
        (ENTRY, "$bb0", F), ("$bb0", "A", B), ("$bb0", "B", B), ("$bb0", "C", B),
        ("A", EXIT, X), ("B", EXIT, X), ("C", "A", B),
    }


def test_empty_final_block_falls_through_to_exit():
    function = snippet(".reg .pred %p1; @%p1 bra END; ret; END:")
    cfg = control_flow_graph(function)
    assert named_edges(function, cfg) == {
        (ENTRY, "$bb0", F), ("$bb0", "END", B), ("$bb0", "$bb1", F), ("$bb1", EXIT, X),
        ("END", EXIT, F),
    }


def test_branch_to_undefined_label_is_reported_with_its_place():
    # The parser rejects such PTX (tests/ptx/test_scopes.py); a front end that builds IR
    # directly (the SASS lift, rewriters) still gets the CFG's own report.
    from dataclasses import replace

    from kernelcheck.ir.nodes import Instruction, Symbol

    function = snippet("bra.uni DONE;\nDONE:\nret;")
    branch = function.body[0]
    body = (Instruction(branch.opcode, branch.modifiers, (Symbol("NOWHERE"),), index=0,
                        pos=branch.pos),) + function.body[1:]
    with pytest.raises(UnsupportedFeature, match=r"k: instruction 0 line 6: .*'NOWHERE'"):
        control_flow_graph(replace(function, body=body))


def test_instruction_blocks_maps_every_instruction():
    function = fixture_function("reduce_sum_block", "reduction")
    owner = instruction_blocks(function)
    assert sorted(owner) == list(range(len(function.instructions)))
    assert all(i in [x.index for x in function.blocks[owner[i]].instructions] for i in owner)
