"""Walks over the terms of a kernel's addresses take time linear in the shared graph.

Paths merged one after the other leave an address that is a join of sums of joins, each
join's values sharing everything below them: a walk that follows every path through such
a term takes time exponential in its depth. libtorch's flash-attention split-KV kernels
build such addresses; these tests build them directly.
"""

from __future__ import annotations

import time

from kernelcheck.analysis.bases import base_param, narrowing_base, split_base
from kernelcheck.analysis.smt import canonical
from kernelcheck.analysis.summary import _residue, analyze_kernel, residue_disjoint
from kernelcheck.analysis.symbolic import SymbolicAccess
from kernelcheck.analysis.terms import Add, Bound, Const, Join, Mul, Opaque, Param, Wrap, add
from kernelcheck.launch.evaluate import evaluate
from kernelcheck.launch.params import param_buffer
from kernelcheck.ptx.parser import parse_ptx

P = Param("p", 0, 8)


def _residue_by_the_rule(t) -> tuple[int, int]:
    """The residue rule restated without sharing (congruence modulo a power of two)."""
    if type(t) is Const:
        return 64, t.value % (1 << 64)
    if type(t) is Add:
        parts = [_residue_by_the_rule(a) for a in t.args]
        m = min(p[0] for p in parts)
        return m, sum(p[1] for p in parts) % (1 << m) if m else 0
    if type(t) is Mul and type(t.args[0]) is Const:
        c = t.args[0].value
        v = (c & -c).bit_length() - 1 if c else 64
        m, r = _residue_by_the_rule(Mul(t.args[1:]) if len(t.args) > 2 else t.args[1])
        m = min(64, m + v)
        return m, (c * r) % (1 << m) if m else 0
    if type(t) is Wrap:
        m, r = _residue_by_the_rule(t.arg)
        m = min(m, t.bits)
        return m, r % (1 << m) if m else 0
    if type(t) is Bound:
        return _residue_by_the_rule(t.arg)
    if type(t) is Join:
        found = {_residue_by_the_rule(a) for a in t.args}
        return found.pop() if len(found) == 1 else (0, 0)
    return 0, 0


def _merged_offsets(depth: int, steps=(16, 32)):
    term = Mul((Const(16), Opaque("i", 64)))
    for k in range(depth):
        term = Join((add(term, Const(steps[0])), Wrap(add(term, Const(steps[1] + 64 * k)),
                                                       64, False)))
    return term


def test_residues_of_shared_terms_equal_the_rule():
    for depth in range(1, 10):
        for steps in ((16, 32), (16, 24), (4, 8)):
            term = _merged_offsets(depth, steps)
            assert _residue(term) == _residue_by_the_rule(term)


def test_a_deep_shared_address_is_decided_quickly():
    # Every value of the written offset is 0 mod 16, the read is 8 bytes after it: the
    # residues alone prove the pair apart, after 2**100 paths through the sums.
    offset = _merged_offsets(100)
    write = SymbolicAccess(None, "k", "write", "global", add(P, offset), 8, None)
    read = SymbolicAccess(None, "k", "read", "global", add(P, offset, Const(8)), 8, None)
    start = time.process_time()
    assert residue_disjoint(write, read)
    assert time.process_time() - start < 5


def _joined_sums(depth: int):
    # A loaded index, scaled: an index, not a pointer, so the base may bound the access.
    term = Mul((Const(16), Opaque("i", 64, memory=True)))
    for k in range(depth):
        term = Join((add(term, Const(16)), add(term, Const(32 + 64 * k))))
    return add(P, term)


def test_the_base_of_a_deep_shared_address_is_found_quickly():
    address = _joined_sums(60)  # 2**60 paths; deep enough, within the recursion limit
    # The answers are compared with ``is``: on a failure, printing such a term would take
    # time exponential in its depth.
    start = time.process_time()
    assert base_param(address) is P and narrowing_base(address) is P
    assert split_base(address)[0] is P
    assert canonical(address) == canonical(Add(tuple(reversed(address.args))))
    assert time.process_time() - start < 5


def _diamonds(depth: int) -> str:
    """A kernel that advances a pointer by one of two amounts ``depth`` times, each choice
    made by a bit of a loaded word, then reads and writes through it."""
    steps = "".join(f"""
    and.b32 %r2, %r1, {1 << (k % 30)};
    setp.ne.s32 %p1, %r2, 0;
    @%p1 bra A{k};
    add.s64 %rd2, %rd2, 16;
    bra.uni J{k};
A{k}:
    add.s64 %rd2, %rd2, {32 + 64 * k};
J{k}:""" for k in range(depth))
    return f""".version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 k_param_0, .param .u64 k_param_1)
{{
    .reg .pred %p<3>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<6>;
    ld.param.u64 %rd1, [k_param_0];
    cvta.to.global.u64 %rd2, %rd1;
    ld.param.u64 %rd3, [k_param_1];
    cvta.to.global.u64 %rd4, %rd3;
    ld.global.u32 %r1, [%rd4];{steps}
    ld.global.u32 %r3, [%rd2+8];
    st.global.u32 [%rd2], %r3;
    ret;
}}
"""


def test_a_kernel_of_many_merged_paths_is_analysed_and_decided_quickly():
    module = parse_ptx(_diamonds(60))
    function = module.get_function("k")
    start = time.process_time()
    summary = analyze_kernel(module, function)
    verdict = evaluate(summary.launch_check, param_buffer(
        function, {"k_param_0": 1 << 20, "k_param_1": 1 << 30}), (4, 1, 1), (64, 1, 1), None)
    assert time.process_time() - start < 10
    # The write is bounded by its base pointer: far from k_param_1's word, it may still
    # meet its own reads (the two ranges of all paths overlap), so not proven idempotent.
    assert summary.kernel_class == "conditional"
    assert verdict.verdict == "not_idempotent"
    assert verdict.clobbered.to_json()[0][0] >= 1 << 20


def _loop_values(depth: int) -> dict:
    """Loop variables of a nest ``depth`` deep, each value built on the one outside it and
    on a large term they all share, listed innermost first (the order that needs the most
    passes when each value is resolved on its own)."""
    from kernelcheck.analysis.terms import LoopVar

    shared = _merged_offsets(12)
    outer = [LoopVar(8 * k, f"R{k}") for k in range(depth)]
    mapping = {outer[0]: add(P, shared)}
    for k in range(1, depth):
        mapping[outer[k]] = add(outer[k - 1], Mul((Const(4), shared)), Const(k))
    return dict(reversed(mapping.items()))


def test_nested_loop_values_resolve_at_any_depth_and_share_their_parts():
    from kernelcheck.analysis.symbolic import resolve_nested
    from kernelcheck.analysis.terms import LoopVar, has_kind

    mapping = _loop_values(12)
    resolved = resolve_nested(mapping)
    assert not any(has_kind(v, LoopVar) for v in resolved.values())
    # The large term every value holds is one object in all the values that were
    # rebuilt (all but the outermost, which holds no loop variable), not a copy each.
    tops = set()
    for var, value in resolved.items():
        if not has_kind(mapping[var], LoopVar):
            continue
        stack = [value]
        while stack:
            t = stack.pop()
            if type(t) is Join:
                tops.add(id(t))
                continue
            stack.extend(getattr(t, "args", ()))
    assert len(tops) == 1


def test_cyclic_loop_values_keep_the_loop_variable():
    from kernelcheck.analysis.symbolic import resolve_nested
    from kernelcheck.analysis.terms import LoopVar, has_kind

    a, b, c = LoopVar(0, "R1"), LoopVar(8, "R2"), LoopVar(16, "R3")
    resolved = resolve_nested({a: add(b, Const(1)), b: add(a, Const(2)), c: add(P, Const(3))})
    assert has_kind(resolved[a], LoopVar) and has_kind(resolved[b], LoopVar)
    assert resolved[c] == add(P, Const(3))
