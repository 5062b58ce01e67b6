"""Reaching definitions, the def-use graph and liveness, checked edge by edge on a
hand-written kernel, against a naive instruction-level oracle on the fixtures, and under
register renaming."""

from __future__ import annotations

import re

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st

from kernelcheck.ir.cfg import ENTRY, EXIT, control_flow_graph
from kernelcheck.ir.dataflow import def_use_graph, kills, liveness, reaching_definitions
from kernelcheck.ir.operands import defs, uses

from .conftest import FIXTURES, _module, snippet

PARAMS = ".param .u64 k_param_0, .param .u32 k_param_1"
BODY = """
.reg .pred %p<4>; .reg .b32 %r<10>; .reg .f32 %f<8>; .reg .b64 %rd<4>;
ld.param.u64 %rd1, [k_param_0];
ld.param.u32 %r1, [k_param_1];
mov.u32 %r2, %tid.x;
mov.u32 %r3, 0;
mov.f32 %f5, 0f00000000;
setp.ge.s32 %p1|%p2, %r2, %r1;
@%p1 bra DONE;
mul.wide.s32 %rd2, %r2, 16;
add.s64 %rd3, %rd1, %rd2;
LOOP:
ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd3];
add.f32 %f5, %f5, %f1;
add.f32 %f6, %f2, %f3;
@%p2 mov.f32 %f6, %f4;
add.f32 %f5, %f5, %f6;
add.s32 %r3, %r3, 1;
add.s64 %rd3, %rd3, 16;
setp.lt.s32 %p3, %r3, %r1;
@%p3 bra LOOP;
st.global.f32 [%rd1], %f5;
DONE:
selp.b32 %r4, %r3, %r9, %p2;
mov.b64 {%r5, %r6}, %rd3;
add.s32 %r7, %r5, %r6;
add.s32 %r8, %r7, %r4;
st.global.u32 [%rd1+4], %r8;
ret;
"""

# (definition, use, register), worked out by hand from BODY (instruction numbers from 0).
EXPECTED_EDGES = {
    (2, 5, "%r2"), (1, 5, "%r1"),
    (5, 6, "%p1"),
    (2, 7, "%r2"),
    (0, 8, "%rd1"), (7, 8, "%rd2"),
    (8, 9, "%rd3"), (15, 9, "%rd3"),            # around the loop back edge
    (4, 10, "%f5"), (13, 10, "%f5"), (9, 10, "%f1"),
    (9, 11, "%f2"), (9, 11, "%f3"),
    (5, 12, "%p2"), (9, 12, "%f4"),             # second half of the predicate pair
    (10, 13, "%f5"), (11, 13, "%f6"), (12, 13, "%f6"),  # guarded mov does not kill 11
    (3, 14, "%r3"), (14, 14, "%r3"),
    (8, 15, "%rd3"), (15, 15, "%rd3"),
    (14, 16, "%r3"), (1, 16, "%r1"),
    (16, 17, "%p3"),
    (0, 18, "%rd1"), (13, 18, "%f5"),
    (3, 19, "%r3"), (14, 19, "%r3"), (ENTRY, 19, "%r9"), (5, 19, "%p2"),
    (ENTRY, 20, "%rd3"), (15, 20, "%rd3"),      # %rd3 is unset on the early branch
    (20, 21, "%r5"), (20, 21, "%r6"),
    (21, 22, "%r7"), (19, 22, "%r4"),
    (0, 23, "%rd1"), (22, 23, "%r8"),
}


def kernel(body: str = BODY):
    return snippet(body, PARAMS)


def test_def_use_graph_of_hand_written_kernel():
    function = kernel()
    assert len(function.instructions) == 25
    graph = def_use_graph(function)
    assert set(graph.edges(data="register")) == EXPECTED_EDGES
    assert graph.number_of_edges() == len(EXPECTED_EDGES)
    assert set(graph) == {ENTRY, *range(25)}
    assert graph.nodes[9]["instruction"] is function.instructions[9]
    assert graph.nodes[ENTRY]["instruction"] is None


def test_reaching_definitions_through_the_loop_back_edge():
    reaching = reaching_definitions(kernel())
    assert {d for d in reaching[9] if d[0] == "%rd3"} == {("%rd3", 8), ("%rd3", 15)}
    assert {d for d in reaching[14] if d[0] == "%r3"} == {("%r3", 3), ("%r3", 14)}
    assert {d for d in reaching[13] if d[0] == "%f6"} == {("%f6", 11), ("%f6", 12)}
    # Everything defined before the loop and not redefined in it reaches its exit.
    assert {("%rd1", 0), ("%r1", 1), ("%r2", 2), ("%rd2", 7)} <= reaching[18]
    assert reaching[0] == frozenset()


def test_liveness_respects_guarded_definitions():
    live = liveness(kernel())
    assert live.live_at(9) == {"%rd3", "%f5", "%p2", "%r3", "%r1", "%rd1", "%r9"}
    # %f6 is live across the guarded mov (which may not write it), not before its sure def.
    assert "%f6" in live.live_at(12)
    assert "%f6" not in live.live_at(11)
    assert live.live_at(24) == frozenset()
    assert live.is_live("%f6", 12) and not live.is_live("%f6", 11)
    assert not live.is_live("%nonexistent", 0)
    cfg = control_flow_graph(kernel())
    loop = next(n for n in cfg if cfg.has_edge(n, n))
    assert live.block_in(loop) == live.live_at(9)
    # Everything live after the loop is also live around it.
    assert live.block_out(loop) == live.live_at(9)


# --------------------------------------------------------------------------- oracle


def naive_def_use(function) -> set:
    """Reaching definitions over single instructions with Python sets, no bit tricks."""
    cfg = control_flow_graph(function)
    instructions = function.instructions
    first = {b.index: b.instructions[0].index for b in function.blocks if b.instructions}

    def heads(node):
        # First instructions reachable from a CFG node through empty blocks.
        out, work, visited = set(), [node], set()
        while work:
            n = work.pop()
            if n in visited or n == EXIT:
                continue
            visited.add(n)
            if n in first:
                out.add(first[n])
            else:
                work.extend(cfg.successors(n))
        return out

    succ = {}
    for block in function.blocks:
        body = block.instructions
        for a, b in zip(body, body[1:], strict=False):
            succ[a.index] = {b.index}
        if body:
            succ[body[-1].index] = set().union(*(heads(s) for s in cfg.successors(block.index)))
    registers = {r for i in instructions for r in defs(i) + uses(i)}
    start = heads(0) if function.blocks else set()
    entry_defs = {(r, ENTRY) for r in registers}
    reached = nx.descendants(cfg, ENTRY)
    unreached_heads = {first[b] for b in first if b not in reached}
    in_sets = {i.index: set() for i in instructions}
    changed = True
    while changed:
        changed = False
        for instr in instructions:
            k = instr.index
            state = set(in_sets[k])
            if k in start or k in unreached_heads:
                state |= entry_defs
            for p in instructions:
                if k in succ.get(p.index, ()):
                    out = set(in_sets[p.index]) | (entry_defs if p.index in start
                                                   or p.index in unreached_heads else set())
                    if kills(p):
                        out = {d for d in out if d[0] not in defs(p)}
                    out |= {(r, p.index) for r in defs(p)}
                    state |= out
            if state != in_sets[k]:
                in_sets[k] = state
                changed = True
    edges = set()
    for instr in instructions:
        state = in_sets[instr.index]
        for reg in uses(instr):
            edges |= {(d, instr.index, reg) for r, d in state if r == reg}
    return edges


def test_def_use_graph_matches_naive_oracle_on_fixtures():
    checked = 0
    for flavour, name in (("sm_90", "reduction"), ("sm_90", "gather_scatter"),
                          ("sm_90", "histogram_scan"), ("O0G", "misc")):
        for function in _module(str(FIXTURES / flavour / f"{name}.ptx")).functions:
            if function.body is None:
                continue
            assert set(def_use_graph(function).edges(data="register")) == naive_def_use(
                function), (flavour, name, function.name)
            checked += 1
    assert checked >= 10


def test_naive_oracle_agrees_with_hand_expectation():
    assert naive_def_use(kernel()) == EXPECTED_EDGES


# --------------------------------------------------------------------------- renaming

_REGISTER = re.compile(r"%(rd|r|f|p)(\d+)\b")


@settings(max_examples=30, deadline=None)
@given(st.permutations(range(10)), st.permutations(range(8)), st.permutations(range(4)),
       st.permutations(range(4)))
def test_renaming_registers_gives_an_isomorphic_def_use_graph(r, f, rd, p):
    perm = {"r": r, "f": f, "rd": rd, "p": p}

    def rename(match: re.Match) -> str:
        return f"%{match.group(1)}{perm[match.group(1)][int(match.group(2))]}"

    renamed_body = _REGISTER.sub(rename, BODY)
    original = def_use_graph(kernel())
    renamed = def_use_graph(kernel(renamed_body))

    def renamed_name(name: str) -> str:
        return _REGISTER.sub(rename, name)

    assert set(renamed.edges(data="register")) == {
        (u, v, renamed_name(reg)) for u, v, reg in original.edges(data="register")}
    assert nx.is_isomorphic(original, renamed)
