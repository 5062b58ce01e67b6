"""Natural loops and reducibility on fixture kernels and hand-written control flow."""

from __future__ import annotations

import networkx as nx
import pytest

from kernelcheck.ir.cfg import EXIT, control_flow_graph
from kernelcheck.ir.loops import (
    back_edges,
    irreducible_edges,
    is_reducible,
    loop_depths,
    natural_loops,
)

from .conftest import block_names, fixture_function, snippet


def named_loops(function) -> list[tuple]:
    """Each loop as (header, latches, body, exits, parent, depth), by block name."""
    cfg = control_flow_graph(function)
    assert is_reducible(cfg)
    name = block_names(function)
    return [
        (name(lp.header), tuple(map(name, lp.latches)), sorted(map(name, lp.body)),
         sorted((name(u), name(v)) for u, v in lp.exits),
         None if lp.parent is None else name(lp.parent), lp.depth)
        for lp in natural_loops(cfg)
    ]


FIXTURE_LOOPS = {
    ("gridstride", "scale_gridstride"): [
        ("$L__BB0_2", ("$L__BB0_2",), ["$L__BB0_2"], [("$L__BB0_2", "$L__BB0_3")], None, 1),
    ],
    ("reduction", "reduce_sum_block"): [
        ("$L__BB0_3", ("$L__BB0_5",), ["$L__BB0_3", "$L__BB0_5", "$bb4"],
         [("$L__BB0_5", "$L__BB0_6")], None, 1),
    ],
    # nvcc unrolls the inner k loop of the tile product: one loop over tiles remains.
    ("shared_tiles", "matmul_tiled"): [
        ("$L__BB1_2", ("$L__BB1_6",), ["$L__BB1_2", "$L__BB1_4", "$L__BB1_6", "$bb3", "$bb5"],
         [("$L__BB1_6", "$L__BB1_7")], None, 1),
    ],
    ("histogram_scan", "scan_block_inclusive"): [
        ("$L__BB2_4", ("$L__BB2_6",), ["$L__BB2_4", "$L__BB2_6", "$bb5"],
         [("$L__BB2_6", "$L__BB2_7")], None, 1),
    ],
    ("atomics", "cas_add_f64"): [
        ("$L__BB3_2", ("$L__BB3_2",), ["$L__BB3_2"], [("$L__BB3_2", "$L__BB3_3")], None, 1),
    ],
    # Two sibling loops (the unrolled-by-4 main loop and its remainder).
    ("gather_scatter", "spmv_csr"): [
        ("$L__BB2_4", ("$L__BB2_4",), ["$L__BB2_4"], [("$L__BB2_4", "$L__BB2_5")], None, 1),
        ("$L__BB2_7", ("$L__BB2_7",), ["$L__BB2_7"], [("$L__BB2_7", "$L__BB2_8")], None, 1),
    ],
    ("misc", "early_return_masked"): [],
    ("stencil", "jacobi_pingpong"): [],
    ("shared_tiles", "transpose_tiled"): [],
}


@pytest.mark.parametrize(("where", "expected"), FIXTURE_LOOPS.items(),
                         ids=[k[1] for k in FIXTURE_LOOPS])
def test_fixture_loops(where, expected):
    ptx, kernel = where
    assert named_loops(fixture_function(kernel, ptx)) == expected


NESTED = """
.reg .pred %p<4>; .reg .b32 %r<8>;
mov.u32 %r1, 0;
OUTER: mov.u32 %r2, 0;
INNER: add.s32 %r2, %r2, 1;
setp.lt.s32 %p1, %r2, 8;
@%p1 bra INNER;
setp.eq.s32 %p3, %r2, %r4;
@%p3 bra CONT;
add.s32 %r3, %r3, %r2;
CONT: add.s32 %r1, %r1, 1;
setp.lt.s32 %p2, %r1, 8;
@%p2 bra OUTER;
setp.eq.s32 %p3, %r1, %r4;
@%p3 bra OUTER;
ret;
"""


def test_nested_loops_with_two_latches_on_one_header():
    function = snippet(NESTED)
    assert named_loops(function) == [
        ("OUTER", ("CONT", "$bb6"), ["$bb3", "$bb4", "$bb6", "CONT", "INNER", "OUTER"],
         [("$bb6", "$bb7")], None, 1),
        ("INNER", ("INNER",), ["INNER"], [("INNER", "$bb3")], "OUTER", 2),
    ]
    cfg = control_flow_graph(function)
    depths = loop_depths(cfg, natural_loops(cfg))
    name = block_names(function)
    assert {name(b): d for b, d in depths.items()} == {
        "$bb0": 0, "OUTER": 1, "INNER": 2, "$bb3": 1, "$bb4": 1, "CONT": 1, "$bb6": 1,
        "$bb7": 0,
    }


def test_irreducible_cycle_is_reported_and_not_a_loop():
    # Two entries into the A <-> B cycle: from the top and by a branch to B.
    function = snippet("""
    .reg .pred %p<3>;
    @%p1 bra B;
    A: @%p2 bra B;
    ret;
    B: bra.uni A;
    """)
    cfg = control_flow_graph(function)
    assert not is_reducible(cfg)
    assert len(irreducible_edges(cfg)) == 1
    assert natural_loops(cfg) == ()


def test_infinite_loop_is_a_natural_loop_without_exits():
    function = snippet("SPIN: bra.uni SPIN;")
    (loop,) = natural_loops(control_flow_graph(function))
    assert (loop.header, loop.latches, loop.exits) == (0, (0,), ())


def test_loops_survive_block_relabelling():
    # Loop structure is a graph property: renumbering the blocks renumbers the answer.
    function = snippet(NESTED)
    cfg = control_flow_graph(function)
    mapping = {n: (n * 7 + 3) % 11 + 100 for n in cfg if isinstance(n, int)}
    relabelled = nx.relabel_nodes(cfg, mapping)
    original = {(lp.header, lp.latches, lp.body, lp.depth) for lp in natural_loops(cfg)}
    moved = {(lp.header, lp.latches, lp.body, lp.depth) for lp in natural_loops(relabelled)}
    assert {(mapping[h], tuple(sorted(mapping[x] for x in lt)), frozenset(mapping[b] for b in bd),
             d) for h, lt, bd, d in original} == moved


def test_back_edges_of_exit_free_graph():
    cfg = nx.DiGraph([("entry", 0), (0, 1), (1, 0), (1, EXIT)])
    assert back_edges(cfg) == ((1, 0),)
