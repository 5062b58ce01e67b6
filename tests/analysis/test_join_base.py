"""A pointer merged from two paths keeps its base parameter (``Join(p + a, p + b)`` is
``p + Join(a, b)``): SASS keeps pointers advanced by an unrolled loop and its remainder
this way, and an access bounded by its base's allocation needs the base."""

from __future__ import annotations

from kernelcheck.analysis.summary import analyze_kernel
from kernelcheck.analysis.symbolic import _hoist_base, _join
from kernelcheck.analysis.terms import Add, Const, Join, Opaque, Param, add
from kernelcheck.launch.evaluate import evaluate
from kernelcheck.ptx.parser import parse_ptx

P = Param("p", 0, 8)
Q = Param("q", 8, 8)


def test_a_common_pointer_leaves_the_join():
    x = Opaque("x", 64)
    joined = _join([add(P, Const(8)), add(P, x, Const(72))])
    assert type(joined) is Add and P in joined.args
    assert Join((Const(8), add(x, Const(72)))) in joined.args


def test_different_pointers_stay_joined():
    assert _join([add(P, Const(8)), add(Q, Const(8))]) == Join((add(P, Const(8)),
                                                               add(Q, Const(8))))


def test_hoisting_goes_through_sums_only():
    term = add(Join((add(P, Const(8)), add(P, Const(16)))), Const(-8))
    assert P in _hoist_base(term).args


def test_a_merged_pointer_keeps_its_base_and_its_allocation_bound():
    # p[idx[tid]] is written at p + 4*idx + 4 or + 8 (two paths); idx is loaded, so the
    # write is bounded by p's allocation, which does not meet q's.
    module = parse_ptx(""".version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 k_param_0, .param .u64 k_param_1)
{
    .reg .pred %p<2>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<9>;
    ld.param.u64 %rd1, [k_param_0];
    ld.param.u64 %rd2, [k_param_1];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd2, %rd3;
    ld.global.u32 %r2, [%rd4];
    mul.wide.u32 %rd5, %r2, 4;
    add.s64 %rd6, %rd1, %rd5;
    setp.lt.u32 %p1, %r1, 16;
    @%p1 bra $L1;
    add.s64 %rd7, %rd6, 4;
    bra.uni $L2;
$L1:
    add.s64 %rd7, %rd6, 8;
$L2:
    st.global.u32 [%rd7], %r1;
    ret;
}
""")
    summary = analyze_kernel(module, module.get_function("k"))
    write = next(a for a in summary.accesses if a.kind == "write")
    assert write.base == "k_param_0"
    p, q = 0x7F0000000000, 0x7F0000100000
    params = p.to_bytes(8, "little") + q.to_bytes(8, "little")
    verdict = evaluate(summary.launch_check, params, (1, 1, 1), (32, 1, 1),
                       [(p, 4096), (q, 4096)])
    assert verdict.verdict == "idempotent"


def _hoisted_by_the_rule(term):
    """The rule of ``_hoist_base`` restated without sharing: through wraps and sums, and the
    common pointer taken out of each join."""
    from kernelcheck.analysis.terms import Wrap

    if type(term) is Wrap:
        return Wrap(_hoisted_by_the_rule(term.arg), term.bits, term.signed)
    if type(term) is Add:
        return add(*(_hoisted_by_the_rule(a) for a in term.args))
    if type(term) is Join:
        return _join(list(dict.fromkeys(_hoisted_by_the_rule(a) for a in term.args)))
    return term


def _merged_chain(depth: int):
    # An address merged at each of ``depth`` joins, each side adding to the one before:
    # the join's two values share everything below them, as paths merged one after the
    # other leave them.
    term = add(P, Opaque("x", 64))
    for k in range(depth):
        term = Join((add(term, Const(4)), add(term, Opaque(f"y{k}", 64))))
    return term


def test_hoisting_a_shared_chain_equals_the_rule_and_takes_linear_time():
    import time

    for depth in range(1, 11):
        term = _merged_chain(depth)
        assert _hoist_base(term) == _hoisted_by_the_rule(term)
    deep = _merged_chain(100)  # 2**100 paths through the sums: only sharing finishes it
    start = time.process_time()
    hoisted = _hoist_base(deep)
    assert time.process_time() - start < 5
    assert type(hoisted) is Add and P in hoisted.args
