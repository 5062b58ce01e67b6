"""Precision rules checked on hand-written PTX kernels: the facts each rule adds, and the
cases where it must add none.

The kernels take ``out``, ``in`` (pointers) and ``n`` (an int); the prologue of
:mod:`tests.analysis.test_rules` loads them into ``%rd3``, ``%rd4`` and ``%r1`` and the global
thread index into ``%r5``. Expected verdicts are decided by reading the kernels.
"""

from __future__ import annotations

import pytest

from tests.analysis.test_rules import IN, kernel, verdict

# A guard passed as an integer (CUTLASS's predicated loads and stores): the flag
# ``selp.u32 g, 1, 0, i < n`` tested again by ``setp.ne.b32 q, g, 0``.
FLAG = """
 setp.lt.s32 %p1, %r5, %r1;
 selp.u32 %r9, 1, 0, %p1;
 {between}
 mul.wide.s32 %rd5, %r5, 4;
 add.s64 %rd6, %rd4, %rd5; add.s64 %rd7, %rd3, %rd5;
 setp.{cmp}.b32 %p2, %r9, {k};
 @%p2 ld.global.u32 %r6, [%rd6];
 @%p2 st.global.u32 [%rd7], %r6;
"""


@pytest.mark.parametrize("cmp, k", [("ne", 0), ("eq", 1)])
def test_a_flag_of_constants_tested_again_is_the_original_guard(cmp, k):
    s = kernel(FLAG.format(between="", cmp=cmp, k=k))
    assert s.kernel_class == "conditional"
    # n = 100 of 256 threads: out[0, 100) and in[0, 100) only.
    assert verdict(s, out=IN + 400, n=100) == "idempotent"
    assert verdict(s, out=IN + 396, n=100) == "not_idempotent"


def test_a_flag_tested_for_its_false_value_is_the_negated_guard():
    # setp.eq g, 0 holds for the threads i >= n: they access out[i], in[i] for i in [n, 256).
    s = kernel(FLAG.format(between="", cmp="eq", k=0))
    # With out = in + 624, out[100, 256) starts where in[100, 256) ends.
    assert verdict(s, out=IN + 624, n=100) == "idempotent"
    assert verdict(s, out=IN + 620, n=100) == "not_idempotent"


@pytest.mark.parametrize("between", [
    "mov.u32 %r9, 1;",                                   # overwritten
    "setp.lt.s32 %p3, %r5, 7; selp.u32 %r9, 1, 0, %p3; mov.u32 %r9, %r9;",  # another flag
    "add.s32 %r9, %r9, 0;",                              # an operation on it
])
def test_a_flag_register_written_again_forgets_the_guard(between):
    s = kernel(FLAG.format(between=between, cmp="ne", k=0))
    # Without the guard i < n, every one of the 256 threads may access its element.
    assert verdict(s, out=IN + 400, n=100) == "not_idempotent"
    assert verdict(s, out=IN + 1024, n=100) == "idempotent"


def test_a_flag_joined_from_two_paths_is_kept_only_when_both_agree():
    s = kernel("""
 setp.lt.s32 %p1, %r5, %r1;
 setp.lt.s32 %p4, %r5, 7;
 selp.u32 %r9, 1, 0, %p1;
 @%p4 bra SKIP;
 selp.u32 %r9, 1, 0, %p4;
SKIP:
 mul.wide.s32 %rd5, %r5, 4;
 add.s64 %rd6, %rd4, %rd5; add.s64 %rd7, %rd3, %rd5;
 setp.ne.b32 %p2, %r9, 0;
 @%p2 ld.global.u32 %r6, [%rd6];
 @%p2 st.global.u32 [%rd7], %r6;
""")
    assert verdict(s, out=IN + 400, n=100) == "not_idempotent"
    assert verdict(s, out=IN + 1024, n=100) == "idempotent"


# l % 4 and 4 * (l / 4) of a signed int l = threadIdx.x, as nvcc rounds a signed division
# toward zero: add (l >> 31) >>> 30 (0 or 3) before masking.
SIGNED_LANE = """
 shr.s32 %r10, %r2, 31; shr.u32 %r11, %r10, 30; add.s32 %r12, %r2, %r11;
 and.b32 %r13, %r12, {mask}; sub.s32 %r7, %r2, %r13;
 mul.wide.s32 %rd5, %r7, 4; add.s64 %rd7, %rd3, %rd5;
 mul.wide.u32 %rd8, %r5, 4; add.s64 %rd6, %rd4, %rd8;
 ld.global.u32 %r6, [%rd6]; st.global.u32 [%rd7], %r6;
"""


@pytest.mark.parametrize("mask", ["-4", "2147483644"])
def test_the_remainder_of_a_thread_index_rounded_as_signed_is_bounded(mask):
    s = kernel(SIGNED_LANE.format(mask=mask))
    assert s.kernel_class == "conditional"
    # tid.x >= 0, so (tid.x >> 31) >>> 30 is 0 and l % 4 lies in [0, 4): out[0, 4) only.
    assert verdict(s, out=IN - 16) == "idempotent"
    assert verdict(s, out=IN - 12) == "not_idempotent"


def test_a_register_minus_its_masked_value_needs_the_same_register():
    # out[i - (j & ~3)] with j = i + 1: not a remainder; the write range is not [0, 4).
    s = kernel(SIGNED_LANE.format(mask="-4").replace("and.b32 %r13, %r12,",
                                                    "add.s32 %r14, %r12, 1; and.b32 %r13, %r14,"))
    assert verdict(s, out=IN - 16) != "idempotent"


def test_a_signed_shift_of_a_value_that_may_be_negative_is_kept():
    # n >> 31 of the int parameter n is -1 for negative n: not folded to 0.
    s = kernel("""
 shr.s32 %r10, %r1, 31; mul.wide.s32 %rd5, %r10, 4; add.s64 %rd7, %rd3, %rd5;
 ld.global.u32 %r6, [%rd4]; st.global.u32 [%rd7], %r6;""")
    assert verdict(s, out=IN + 4, n=-5) == "not_idempotent"  # writes out[-1] = in[0]
    assert verdict(s, out=IN + 4, n=5) == "idempotent"


# One thread copies n elements two at a time after a remainder of n & 1 elements:
# for (j = 0; j < (n & 1); j++) copy(j); for (; j < n; j += 2) { copy(j); copy(j + 1); }
UNROLLED = """
 setp.lt.s32 %p1, %r1, 1; @%p1 bra DONE;
 mov.u32 %r12, 0;
 {remainder}
CHECK:
 setp.lt.s32 %p3, %r1, 2; @%p3 bra DONE;
MAIN:
 mul.wide.s32 %rd5, %r12, 4;
 add.s64 %rd6, %rd4, %rd5; ld.global.u32 %r6, [%rd6]; ld.global.u32 %r7, [%rd6+4];
 add.s64 %rd7, %rd3, %rd5; st.global.u32 [%rd7], %r6; st.global.u32 [%rd7+4], %r7;
 add.s32 %r12, %r12, 2;
 setp.lt.s32 %p4, %r12, %r1; @%p4 bra MAIN;
DONE:"""
REMAINDER = """
 and.b32 %r20, %r1, 1;
 setp.eq.s32 %p2, %r20, 0; @%p2 bra CHECK;
 ld.global.u32 %r6, [%rd4]; st.global.u32 [%rd3], %r6;
 mov.u32 %r12, 1;"""


def test_an_unrolled_loop_after_its_remainder_stays_below_the_bound():
    s = kernel(UNROLLED.format(remainder=REMAINDER))
    assert s.kernel_class == "conditional"
    # n = 9 and 10: in[0, n) and out[0, n) exactly, though the loop test is only j < n.
    for n in (9, 10):
        assert verdict(s, out=IN + 4 * n, n=n, block=(1, 1, 1)) == "idempotent"
        assert verdict(s, out=IN + 4 * n - 4, n=n, block=(1, 1, 1)) == "not_idempotent"


@pytest.mark.parametrize("remainder", [
    "",                                               # no remainder: odd n reads in[n]
    REMAINDER.replace("and.b32 %r20, %r1, 1;", "and.b32 %r20, %r1, 3;"),  # wrong residue
])
def test_an_unrolled_loop_without_its_remainder_may_pass_the_bound(remainder):
    s = kernel(UNROLLED.format(remainder=remainder))
    # With n = 9 the last iteration (j = 8) also copies in[9] to out[9].
    assert verdict(s, out=IN + 36, n=9, block=(1, 1, 1)) == "not_idempotent"


def test_a_value_minus_its_remainder_keeps_its_linear_form():
    # k - k % 4 (k - (k & 3)) stays a sum in k: loop counts from it rely on that form.
    from kernelcheck.analysis.semantics import _fold_masked
    from kernelcheck.analysis.terms import Add, BitAnd, Const, Param, add, neg

    k = Param("k", 0, 4)
    term = add(k, neg(BitAnd(k, Const(3))))
    assert type(_fold_masked(term, 32)) is Add


# The flag made in a function and returned, then passed to another that tests it (how the
# metamorphic "outline" transform splits CUTLASS's guarded epilogue).
FLAG_THROUGH_CALLS = """
.func (.param .b32 func_retval0) make_flag(.param .b32 i, .param .b32 n)
{
 .reg .pred %q<2>; .reg .b32 %t<4>;
 ld.param.b32 %t1, [i]; ld.param.b32 %t2, [n];
 setp.lt.s32 %q1, %t1, %t2;
 selp.u32 %t3, 1, 0, %q1;
 st.param.b32 [func_retval0], %t3;
 ret;
}
.func store_if(.param .b32 flag, .param .b64 to, .param .b32 v)
{
 .reg .pred %q<2>; .reg .b32 %t<3>; .reg .b64 %u<2>;
 ld.param.b32 %t1, [flag]; ld.param.b64 %u1, [to]; ld.param.b32 %t2, [v];
 setp.ne.b32 %q1, %t1, 0;
 @%q1 st.global.u32 [%u1], %t2;
 ret;
}
"""


def test_a_flag_passed_through_parameters_and_return_values_stays_a_flag():
    s = kernel("""
 { .param .b32 a0; st.param.b32 [a0], %r5; .param .b32 a1; st.param.b32 [a1], %r1;
   .param .b32 r0;
   call.uni (r0), make_flag, (a0, a1);
   ld.param.b32 %r9, [r0]; }
 mul.wide.s32 %rd5, %r5, 4;
 add.s64 %rd6, %rd4, %rd5; add.s64 %rd7, %rd3, %rd5;
 setp.ne.b32 %p2, %r9, 0;
 @%p2 ld.global.u32 %r6, [%rd6];
 { .param .b32 b0; st.param.b32 [b0], %r9; .param .b64 b1; st.param.b64 [b1], %rd7;
   .param .b32 b2; st.param.b32 [b2], %r6;
   call.uni store_if, (b0, b1, b2); }
""", before=FLAG_THROUGH_CALLS)
    # As without the calls: n = 100 of 256 threads touch out[0, 100) and in[0, 100) only.
    assert verdict(s, out=IN + 400, n=100) == "idempotent"
    assert verdict(s, out=IN + 396, n=100) == "not_idempotent"


# The remainder loop of a 64-bit grid-stride loop unrolled 4 times, as nvcc writes it: each
# thread first copies T mod 4 of its T = (n - i - 1) / s + 1 elements i, i + s, ... (s the
# thread count), counting the remainder down to 0 (the main loop is left out). In 32 bits
# the cap is not proven, and must not be: a grid of 2**32 threads wraps the stride to 0.
REMAINDER_LOOP = """
 mov.u32 %r10, %ntid.x; mov.u32 %r11, %nctaid.x; mul.wide.u32 %rd10, %r10, %r11;
 mov.u32 %r17, %ctaid.x; mul.wide.u32 %rd11, %r17, %r10;
 mov.u32 %r18, %tid.x; cvt.u64.u32 %rd12, %r18; add.s64 %rd13, %rd11, %rd12;
 cvt.u64.u32 %rd14, %r1;
 setp.ge.s64 %p1, %rd13, %rd14; @%p1 bra DONE;
 sub.s64 %rd15, %rd14, %rd13; add.s64 %rd15, %rd15, -1; div.u64 %rd16, %rd15, %rd10;
 add.s64 %rd16, %rd16, {extra};
 and.b64 %rd17, %rd16, 3;
 setp.eq.s64 %p2, %rd17, 0; @%p2 bra DONE;
 mov.u64 %rd18, %rd13;
LOOP:
 shl.b64 %rd5, %rd18, 2;
 add.s64 %rd6, %rd4, %rd5; ld.global.u32 %r6, [%rd6];
 add.s64 %rd7, %rd3, %rd5; st.global.u32 [%rd7], %r6;
 add.s64 %rd18, %rd18, %rd10;
 add.s64 %rd17, %rd17, -1;
 setp.ne.s64 %p3, %rd17, 0; @%p3 bra LOOP;
DONE:"""


def test_a_remainder_loop_counted_from_the_trip_count_stays_below_the_bound():
    s = kernel(REMAINDER_LOOP.format(extra=1))
    # n = 300, 256 threads: threads 0..43 copy i and i + 256, the others i; in[0, 300).
    assert verdict(s, out=IN + 1200, n=300) == "idempotent"
    assert verdict(s, out=IN + 1196, n=300) == "not_idempotent"


def test_a_remainder_loop_that_may_run_past_the_trip_count_is_not_capped():
    # (T + 1) mod 4: threads 0..43 copy three elements, up to i + 512.
    s = kernel(REMAINDER_LOOP.format(extra=2))
    assert verdict(s, out=IN + 1200, n=300) == "not_idempotent"


# One thread copies n - n % 4 elements, four at a time, counting the rest down by 4 to 0;
# {rest} follows the loop, and {skip} is where a count below 4 goes.
BY_FOUR = """
 setp.ne.s32 %p1, %r5, 0; @%p1 bra DONE;
 and.b32 %r20, %r1, 3; sub.s32 %r21, %r1, %r20;
 mov.u32 %r12, 0;
 setp.lt.s32 %p2, %r21, 4; @%p2 bra {skip};
LOOP:
 mul.wide.s32 %rd5, %r12, 4;
 add.s64 %rd6, %rd4, %rd5; ld.global.u32 %r6, [%rd6]; ld.global.u32 %r7, [%rd6+12];
 add.s64 %rd7, %rd3, %rd5; st.global.u32 [%rd7], %r6; st.global.u32 [%rd7+12], %r7;
 add.s32 %r12, %r12, 4;
 add.s32 %r21, %r21, -4;
 setp.ne.s32 %p3, %r21, 0; @%p3 bra LOOP;
{rest}
DONE:"""
COUNT_DOWN_BY_FOUR = BY_FOUR.format(skip="DONE", rest="")


@pytest.mark.parametrize("n", [8, 10, 11])
def test_a_count_down_by_four_to_zero_bounds_its_loop(n):
    s = kernel(COUNT_DOWN_BY_FOUR)
    # in[0, 8) and out[0, 8) for n = 8, 10 and 11.
    assert verdict(s, out=IN + 32, n=n) == "idempotent"
    assert verdict(s, out=IN + 28, n=n) == "not_idempotent"


# The same count-down followed by its remainder (n % 4 elements, unrolled), as nvcc writes
# it: the remainder's index is 0 (the main loop skipped) or where the main loop ended.
WITH_REMAINDER = BY_FOUR.format(skip="REST", rest="""REST:
 setp.eq.s32 %p4, %r20, 0; @%p4 bra DONE;
 mul.wide.s32 %rd5, %r12, 4;
 add.s64 %rd6, %rd4, %rd5; ld.global.u32 %r6, [%rd6];
 add.s64 %rd7, %rd3, %rd5; st.global.u32 [%rd7], %r6;
 setp.eq.s32 %p5, %r20, 1; @%p5 bra DONE;
 ld.global.u32 %r6, [%rd6+4]; st.global.u32 [%rd7+4], %r6;
 setp.eq.s32 %p6, %r20, 2; @%p6 bra DONE;
 ld.global.u32 %r6, [%rd6+8]; st.global.u32 [%rd7+8], %r6;""")


@pytest.mark.parametrize("n", [8, 10, 11])
def test_a_remainder_loop_a_launch_skips_is_not_counted(n):
    # With n = 8 the remainder loop does not run (n % 4 == 0): its test is a comparison of
    # launch constants that the launch check keeps, though n % 4 also occurs in the
    # address (in the main loop's count, joined with the path that skips the main loop).
    s = kernel(WITH_REMAINDER)
    assert verdict(s, out=IN + 4 * n, n=n) == "idempotent"
    assert verdict(s, out=IN + 4 * n - 4, n=n) == "not_idempotent"
