"""Dominators and post-dominators on fixture kernels and on graphs that cannot reach exit."""

from __future__ import annotations

import networkx as nx

from kernelcheck.ir.cfg import ENTRY, EXIT, block_of_label, control_flow_graph
from kernelcheck.ir.dominance import (
    dominance_frontiers,
    dominates,
    dominators,
    exitless_blocks,
    post_dominators,
)

from .conftest import block_names, fixture_function, snippet


def named_tree(function, tree: dict) -> dict:
    name = block_names(function)
    return {name(n): name(d) for n, d in tree.items()}


def test_grid_stride_loop_dominators():
    function = fixture_function("scale_gridstride", "gridstride")
    cfg = control_flow_graph(function)
    assert named_tree(function, dominators(cfg)) == {
        ENTRY: ENTRY, "$bb0": ENTRY, "$bb1": "$bb0", "$L__BB0_2": "$bb1",
        "$L__BB0_3": "$bb0", EXIT: "$L__BB0_3",
    }
    assert named_tree(function, post_dominators(cfg)) == {
        EXIT: EXIT, "$L__BB0_3": EXIT, "$L__BB0_2": "$L__BB0_3", "$bb1": "$L__BB0_2",
        "$bb0": "$L__BB0_3", ENTRY: "$bb0",
    }


def test_reduction_dominators_and_post_dominators():
    function = fixture_function("reduce_sum_block", "reduction")
    cfg = control_flow_graph(function)
    idom = named_tree(function, dominators(cfg))
    ipdom = named_tree(function, post_dominators(cfg))
    # Both the loop and the skip edge leave from $L__BB0_2 and meet at $L__BB0_6.
    assert idom["$L__BB0_3"] == "$L__BB0_2"
    assert idom["$L__BB0_6"] == "$L__BB0_2"
    assert idom["$L__BB0_5"] == "$L__BB0_3"
    assert idom["$L__BB0_8"] == "$L__BB0_6"
    assert ipdom["$bb0"] == "$L__BB0_2"
    assert ipdom["$L__BB0_3"] == "$L__BB0_5"
    assert ipdom["$L__BB0_2"] == "$L__BB0_6"
    assert ipdom["$L__BB0_6"] == "$L__BB0_8"


def test_early_returns_post_dominated_by_the_ret_block():
    function = fixture_function("early_return_masked", "misc")
    cfg = control_flow_graph(function)
    ret_block = block_of_label(function)["$L__BB0_3"]
    ipdom = post_dominators(cfg)
    assert all(ipdom[b] == ret_block for b in (0, 1, 2))
    assert all(dominators(cfg)[b] == b - 1 for b in (1, 2))
    assert dominators(cfg)[ret_block] == 0


def test_jacobi_diamond_meets_at_the_ret_block():
    function = fixture_function("jacobi_pingpong", "stencil")
    cfg = control_flow_graph(function)
    labels = block_of_label(function)
    idom = dominators(cfg)
    assert idom[labels["$L__BB1_4"]] == 0
    assert idom[labels["$L__BB1_2"]] == 2
    assert idom[labels["$L__BB1_3"]] == 1
    assert post_dominators(cfg)[1] == labels["$L__BB1_4"]
    assert dominance_frontiers(cfg)[1] == {labels["$L__BB1_4"]}


def test_dominates_is_reflexive_and_follows_the_tree():
    function = fixture_function("reduce_sum_block", "reduction")
    cfg = control_flow_graph(function)
    idom = dominators(cfg)
    for node in idom:
        assert dominates(idom, ENTRY, node)
        assert dominates(idom, node, node)
    # Cross-check against the definition: a dominates b iff removing a cuts b off entry.
    for a in range(len(function.blocks)):
        cut = cfg.copy()
        cut.remove_node(a)
        reachable = nx.descendants(cut, ENTRY) | {ENTRY}
        for b in range(len(function.blocks)):
            if b != a:
                assert dominates(idom, a, b) == (b not in reachable), (a, b)


def test_infinite_loop_gets_sound_post_dominators():
    function = snippet("""
    .reg .pred %p<3>; .reg .b32 %r<3>;
    setp.eq.s32 %p1, %r1, 0;
    @%p1 bra SPIN;
    ret;
    SPIN: add.s32 %r2, %r2, 1;
    setp.eq.s32 %p2, %r2, 0;
    @%p2 bra SPIN2;
    bra.uni SPIN;
    SPIN2: bra.uni SPIN;
    """)
    cfg = control_flow_graph(function)
    labels = block_of_label(function)
    spin, spin2 = labels["SPIN"], labels["SPIN2"]
    assert set(exitless_blocks(cfg)) == {spin, spin + 1, spin2}
    ipdom = post_dominators(cfg)
    assert set(ipdom) == set(cfg)
    # The spin blocks never reach exit: no block of the loop is claimed to post-dominate
    # block 0, whose other successor returns.
    assert ipdom[0] == EXIT
    for node in (spin, spin + 1, spin2):
        assert not dominates(ipdom, node, 0)
