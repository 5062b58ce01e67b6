"""Launches that break what the launch check assumes never get "idempotent".

The launch check assumes one thing it cannot verify from the arguments: an access whose
address depends on memory contents stays inside the allocation its base pointer points
into (docs/design.md, "Assumptions"). These properties draw launches that break it in the
ways a launch can show, on small kernels built for each way, in the Python evaluator and
in the C one:

* the base pointer lies in no allocation of the table;
* the address range computed from the arguments misses the base's allocation altogether
  (the launch contradicts the assumption: "not proven", never "writes nothing");
* the offset is arithmetic the analysis does not model: it may carry another pointer, so
  it is never narrowed to the base's allocation, whatever the table says;
* a loaded 64-bit value added as it is: it may be the pointer itself (``q[n]`` with ``q``
  loaded and ``n`` a 64-bit integer compiles to ``n + q``);
* a 64-bit integer parameter in the offset of an indirect access (``out[idx[i] + off]``):
  it may be a pointer difference that moves the access into another allocation, so the
  base's allocation bounds the access only when ``out + 4*off`` lies inside it.

Where the verdict is "idempotent", it must hold for every access that respects the
assumption: the bytes written, cut to what the assumption allows, never meet the bytes read.
"""

from __future__ import annotations

from functools import cache

from hypothesis import given, settings
from hypothesis import strategies as st

from kernelcheck.analysis.summary import analyze_kernel
from kernelcheck.launch.evaluate import evaluate
from kernelcheck.ptx.parser import parse_ptx

HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"
BASE = 0x7F0000000000

# out[tid] = in[(idx[tid] & 15) + k]: the read is bounded by the argument k and by in's
# allocation (the in-bounds assumption for a loaded index).
GATHER = HEADER + """
.visible .entry gather(.param .u64 out, .param .u64 in, .param .u64 idx, .param .u32 k)
{
    .reg .b32 %r<6>; .reg .b64 %rd<12>; .reg .f32 %f<2>;
    ld.param.u64 %rd1, [out]; ld.param.u64 %rd2, [in]; ld.param.u64 %rd3, [idx];
    ld.param.u32 %r1, [k];
    cvta.to.global.u64 %rd4, %rd1; cvta.to.global.u64 %rd5, %rd2;
    cvta.to.global.u64 %rd6, %rd3;
    mov.u32 %r2, %tid.x;
    mul.wide.u32 %rd7, %r2, 4;
    add.s64 %rd8, %rd6, %rd7;
    ld.global.u32 %r3, [%rd8];
    and.b32 %r4, %r3, 15;
    add.s32 %r5, %r4, %r1;
    mul.wide.u32 %rd9, %r5, 4;
    add.s64 %rd10, %rd5, %rd9;
    ld.global.f32 %f1, [%rd10];
    add.s64 %rd11, %rd4, %rd7;
    st.global.f32 [%rd11], %f1;
    ret;
}
"""

# out[tid + clock] = in[tid]: an offset the analysis does not model (a clock value here; a
# 64-bit shift of a pointer difference in the lifted SASS of the reported case).
UNMODELLED = HEADER + """
.visible .entry unmodelled(.param .u64 out, .param .u64 in)
{
    .reg .b32 %r<4>; .reg .b64 %rd<10>; .reg .f32 %f<2>;
    ld.param.u64 %rd1, [out]; ld.param.u64 %rd2, [in];
    cvta.to.global.u64 %rd3, %rd1; cvta.to.global.u64 %rd4, %rd2;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd5, %r1, 4;
    add.s64 %rd6, %rd4, %rd5;
    ld.global.f32 %f1, [%rd6];
    mov.u32 %r2, %clock;
    cvt.u64.u32 %rd7, %r2;
    add.s64 %rd8, %rd3, %rd7;
    add.s64 %rd9, %rd8, %rd5;
    st.global.f32 [%rd9], %f1;
    ret;
}
"""

# q = ptrs[0]; q[n] = in[tid] with n a 64-bit integer: the address is n + q, which names n
# as its only pointer-wide parameter. The allocation n's value falls in must not bound it.
LOADED_POINTER = HEADER + """
.visible .entry loaded_pointer(.param .u64 ptrs, .param .u64 in, .param .u64 n)
{
    .reg .b32 %r<2>; .reg .b64 %rd<12>; .reg .f32 %f<2>;
    ld.param.u64 %rd1, [ptrs]; ld.param.u64 %rd2, [in]; ld.param.u64 %rd3, [n];
    cvta.to.global.u64 %rd4, %rd1; cvta.to.global.u64 %rd5, %rd2;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd6, %r1, 4;
    add.s64 %rd7, %rd5, %rd6;
    ld.global.f32 %f1, [%rd7];
    ld.global.u64 %rd8, [%rd4];
    add.s64 %rd9, %rd3, %rd8;
    st.global.u8 [%rd9], 0;
    ret;
}
"""

# out[idx[tid] + off] = in[tid] with off a 64-bit integer: numba's negative-index wraparound
# adds a 64-bit size this way; a pointer difference (in - out) / 4 would move every store
# into in's allocation.
SCATTER_OFF = HEADER + """
.visible .entry scatter_off(.param .u64 out, .param .u64 in, .param .u64 idx, .param .u64 off)
{
    .reg .b32 %r<2>; .reg .b64 %rd<16>; .reg .f32 %f<2>;
    ld.param.u64 %rd1, [out]; ld.param.u64 %rd2, [in]; ld.param.u64 %rd3, [idx];
    ld.param.u64 %rd4, [off];
    cvta.to.global.u64 %rd5, %rd1; cvta.to.global.u64 %rd6, %rd2;
    cvta.to.global.u64 %rd7, %rd3;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd8, %r1, 4;
    add.s64 %rd9, %rd7, %rd8;
    ld.global.s32 %rd10, [%rd9];
    add.s64 %rd11, %rd10, %rd4;
    shl.b64 %rd12, %rd11, 2;
    add.s64 %rd13, %rd5, %rd12;
    add.s64 %rd14, %rd6, %rd8;
    ld.global.f32 %f1, [%rd14];
    st.global.f32 [%rd13], %f1;
    ret;
}
"""


@cache
def _check(text: str, name: str):
    module = parse_ptx(text)
    return analyze_kernel(module, module.get_function(name)).launch_check


def _params(*values: tuple[int, int]) -> bytes:
    return b"".join(v.to_bytes(size, "little") for v, size in values)


def _both(check, params, threads, allocations) -> set[str]:
    """The verdicts of the Python and the C evaluator."""
    from kernelcheck.shim.native import native_evaluate

    grid, block = (1, 1, 1), (threads, 1, 1)
    python = evaluate(check, params, grid, block, allocations).verdict
    c = native_evaluate(check.to_bytes(), params, grid, block, allocations)
    return {python, c[0]}


def _overlap(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def _cut(r: tuple[int, int], alloc: tuple[int, int]) -> tuple[int, int]:
    return max(r[0], alloc[0]), min(r[1], alloc[0] + alloc[1])


_offsets = st.integers(0, 63).map(lambda k: 4 * k)


@settings(max_examples=60, deadline=None)
@given(out_at=st.integers(0, 3).map(lambda k: BASE + k * 0x10000),
       in_off=_offsets, in_size=st.integers(1, 64).map(lambda k: 4 * k),
       k=st.integers(0, 80), threads=st.integers(1, 16), in_alias=st.booleans())
def test_gather_never_idempotent_against_its_assumption(out_at, in_off, in_size, k, threads,
                                                        in_alias):
    # Small allocations, so that k may push the computed range past their end.
    alloc_in = (BASE + 0x100000, in_off + in_size)
    alloc_idx = (BASE + 0x200000, 0x1000)
    alloc_out = (out_at, 0x200)
    in_ptr = (alloc_out[0] if in_alias else alloc_in[0]) + in_off
    allocations = [alloc_out, alloc_idx] + ([] if in_alias else [alloc_in])
    base_alloc = alloc_out if in_alias else alloc_in
    check = _check(GATHER, "gather")
    params = _params((out_at, 8), (in_ptr, 8), (alloc_idx[0], 8), (k, 4))
    verdicts = _both(check, params, threads, allocations)
    computed = (in_ptr + 4 * k, in_ptr + 4 * k + 64)   # what the arguments allow
    allowed = _cut(computed, base_alloc)                 # and what the assumption allows
    if allowed[0] >= allowed[1]:
        # The launch contradicts the assumption: never "idempotent" ("writes nothing").
        assert "idempotent" not in verdicts
        return
    if "idempotent" in verdicts:
        writes = (out_at, out_at + 4 * threads)
        reads = [allowed, (alloc_idx[0], alloc_idx[0] + 4 * threads)]
        assert not any(_overlap(writes, r) for r in reads)


@settings(max_examples=40, deadline=None)
@given(out_at=st.integers(0, 3).map(lambda k: BASE + k * 0x10000),
       in_at=st.integers(0, 3).map(lambda k: BASE + 0x100000 + k * 0x10000),
       threads=st.integers(1, 64), table=st.booleans())
def test_unmodelled_offset_is_never_narrowed(out_at, in_at, threads, table):
    check = _check(UNMODELLED, "unmodelled")
    allocations = [(out_at, 0x1000), (in_at, 0x1000)] if table else None
    verdicts = _both(check, _params((out_at, 8), (in_at, 8)), threads, allocations)
    # out + clock may be any address: in[0, threads) among them.
    assert "idempotent" not in verdicts


@settings(max_examples=40, deadline=None)
@given(n_in_alloc=st.booleans(), threads=st.integers(1, 64))
def test_loaded_pointer_plus_integer_is_not_bounded_by_the_integer(n_in_alloc, threads):
    check = _check(LOADED_POINTER, "loaded_pointer")
    ptrs, inp = BASE, BASE + 0x100000
    n = BASE + 0x200000 + 16 if n_in_alloc else 5
    allocations = [(ptrs, 0x1000), (inp, 0x1000), (BASE + 0x200000, 0x1000)]
    verdicts = _both(check, _params((ptrs, 8), (inp, 8), (n, 8)), threads, allocations)
    # The loaded pointer may be anything (in - n among its values): never idempotent.
    assert "idempotent" not in verdicts


def test_the_reported_case_is_not_proven_with_an_allocation_table():
    """out[i + (in - out) + 1] = in[i] from the SASS, with out and in in two allocations:
    the store's offset is opaque after the lift, so its bytes are unknown."""
    from kernelcheck.analysis.provider import verdict_provider
    from kernelcheck.sass.lift import lift_module
    from kernelcheck.sass.loader import load_cubin_sass
    from tests.shim.conftest import FIXTURES

    path = FIXTURES / "cubin" / "sm_90" / "launch_args.cubin"
    module = lift_module(load_cubin_sass(path.read_bytes(), str(path)).module)
    provider = verdict_provider(module)
    out, inp = BASE, BASE + 0x100000
    verdict = provider("store_past_pointer_difference", [out, inp, 256], (1, 1, 1),
                       (256, 1, 1), allocations=[(out, 4096), (inp, 4096)])
    assert verdict == "not_proven"


@settings(max_examples=60, deadline=None)
@given(out_at=st.integers(0, 3).map(lambda k: BASE + k * 0x10000),
       in_at=st.integers(0, 3).map(lambda k: BASE + 0x100000 + k * 0x10000),
       shift=st.integers(-0x90, 0x90), into_in=st.booleans(), threads=st.integers(1, 64))
def test_integer_offset_bounds_a_scatter_only_inside_the_base_allocation(out_at, in_at, shift,
                                                                          into_in, threads):
    check = _check(SCATTER_OFF, "scatter_off")
    store = check.accesses[-1]
    assert store.base_offset == 0 and store.rebase_slot >= 0
    idx, out_size = BASE + 0x300000, 0x200
    allocations = [(out_at, out_size), (in_at, 0x1000), (idx, 0x1000)]
    # off: a small index, or the pointer difference that moves the stores into in
    # (a parameter is read unsigned: a negative one is a huge offset, outside)
    off = ((in_at - out_at) // 4 + shift if into_in else shift) % (1 << 64)
    verdicts = _both(check, _params((out_at, 8), (in_at, 8), (idx, 8), (off, 8)), threads,
                     allocations)
    if 4 * off <= out_size:
        # out + 4*off points into out's allocation: the scatter stays in it, away from in
        # and idx (the narrowing this kernel gets)
        assert verdicts == {"idempotent"}
    else:
        # the offset may carry the stores anywhere, in among them
        assert "idempotent" not in verdicts
