"""One hand-written PTX kernel per analysis rule: the class, the reason, and instance verdicts.

Each kernel is small enough to check by hand. Kernels use three parameters, ``out`` and
``in`` (pointers) and ``n`` (an int); the helper prologue loads them into ``%rd3`` (out),
``%rd4`` (in), ``%r1`` (n) and the global thread index ``i`` into ``%r5``.
"""

from __future__ import annotations

import pytest

from kernelcheck.analysis.summary import analyze_kernel
from kernelcheck.launch.evaluate import evaluate, evaluate_general, pack_params
from kernelcheck.ptx.parser import parse_ptx

HEADER = ".version 8.7\n.target sm_90a\n.address_size 64\n"
PROLOGUE = """
 .reg .pred %p<9>; .reg .b32 %r<40>; .reg .b64 %rd<40>; .reg .f32 %f<9>;
 ld.param.u64 %rd1, [k_param_0]; ld.param.u64 %rd2, [k_param_1];
 ld.param.u32 %r1, [k_param_2];
 cvta.to.global.u64 %rd3, %rd1; cvta.to.global.u64 %rd4, %rd2;
 mov.u32 %r2, %tid.x; mov.u32 %r3, %ctaid.x; mov.u32 %r4, %ntid.x;
 mad.lo.s32 %r5, %r3, %r4, %r2;
"""
OUT, IN = 1 << 20, 1 << 24


def kernel(body: str, before: str = "", decls: str = ""):
    """Parse a kernel ``k(out, in, n)`` with the prologue and ``body``; return its summary."""
    text = (HEADER + before + "\n.visible .entry k(.param .u64 k_param_0, .param .u64 "
            "k_param_1, .param .u32 k_param_2)\n{" + decls + PROLOGUE + body + "\n ret;\n}\n")
    module = parse_ptx(text)
    return analyze_kernel(module, module.get_function("k"))


def verdict(summary, out=OUT, inp=IN, n=256, grid=(1, 1, 1), block=(256, 1, 1)):
    params = pack_params([(0, 8, out), (8, 8, inp), (16, 4, n)], None)
    fast = evaluate(summary.launch_check, params, grid, block)
    general = evaluate_general(summary.launch_check, params, grid, block)
    assert fast.verdict == general.verdict
    return fast.verdict


# out[i] = in[i] under if (i < n), with the byte offset computed in several ways.
COPY = """
 setp.ge.s32 %p1, %r5, %r1;
 @%p1 bra DONE;
 {offset}
 add.s64 %rd6, %rd4, %rd5; ld.global.u32 %r6, [%rd6];
 add.s64 %rd7, %rd3, %rd5; st.global.u32 [%rd7], %r6;
DONE:
"""
WIDE = "mul.wide.s32 %rd5, %r5, 4;"
SHIFT = "cvt.s64.s32 %rd8, %r5; shl.b64 %rd5, %rd8, 2;"


@pytest.mark.parametrize("offset", [WIDE, SHIFT], ids=["mul.wide", "cvt+shl"])
def test_guarded_copy_is_conditional_and_exact_at_the_guard(offset):
    s = kernel(COPY.format(offset=offset))
    assert s.kernel_class == "conditional"
    assert "not idempotent when" in s.reasons[0] and "overlaps" in s.reasons[0]
    assert verdict(s) == "idempotent"
    assert verdict(s, out=IN) == "not_idempotent"
    # The guard i < n bounds both ranges to n elements: adjacent buffers do not meet,
    # even though the launch has more threads than elements.
    assert verdict(s, out=IN + 4 * 256, block=(512, 1, 1)) == "idempotent"
    assert verdict(s, out=IN + 4 * 255, block=(512, 1, 1)) == "not_idempotent"


def test_an_unguarded_copy_ranges_over_every_thread():
    s = kernel(COPY.format(offset=WIDE).replace("@%p1 bra DONE;", ""))
    assert s.kernel_class == "conditional"
    assert verdict(s, out=IN + 4 * 256, block=(512, 1, 1)) == "not_idempotent"
    assert verdict(s, out=IN + 4 * 512, block=(512, 1, 1)) == "idempotent"


# 32-bit byte offsets wrap at 2**32; mul.wide does not.
UNGUARDED = """
 {offset}
 add.s64 %rd6, %rd4, %rd5; ld.global.u32 %r6, [%rd6];
 add.s64 %rd7, %rd3, %rd5; st.global.u32 [%rd7], %r6;
"""
HUGE = dict(grid=((3 << 29) // 1024, 1, 1), block=(1024, 1, 1))  # 1.5 * 2**30 threads


def test_mul_wide_does_not_wrap():
    s = kernel(UNGUARDED.format(offset="mul.wide.u32 %rd5, %r5, 4;"))
    # Writes [0, 1.5 * 2**32), reads [2**32, 2.5 * 2**32): they meet.
    assert verdict(s, out=0, inp=1 << 32, **HUGE) == "not_idempotent"


def test_a_32_bit_offset_wraps_around_and_the_check_follows_it():
    # out[(4 * i + n) mod 2**32 bytes] = in[i]: with n = 2**32 - 512 the first 128 threads
    # write near out + 4 GiB, the others wrap around to [out, out + 512).
    s = kernel(UNGUARDED.format(offset="mad.lo.s32 %r7, %r5, 4, %r1; cvt.u64.u32 %rd5, %r7;"
                                ).replace("add.s64 %rd6, %rd4, %rd5;",
                                          "mul.wide.u32 %rd9, %r5, 4; add.s64 %rd6, %rd4, %rd9;"))
    assert s.kernel_class == "conditional"
    n = (1 << 32) - 512
    assert verdict(s, out=IN - 256, n=n) == "not_idempotent"  # the wrapped part meets in
    assert verdict(s, out=IN + 1024, n=n) == "idempotent"


def test_and_mask_bounds_the_index():
    # out[i & 255] = in[i]
    s = kernel("""
 and.b32 %r7, %r5, 255; mul.wide.u32 %rd5, %r7, 4; add.s64 %rd7, %rd3, %rd5;
 mul.wide.u32 %rd8, %r5, 4; add.s64 %rd6, %rd4, %rd8;
 ld.global.u32 %r6, [%rd6]; st.global.u32 [%rd7], %r6;""")
    assert s.kernel_class == "conditional"
    assert verdict(s, out=IN + 2048, block=(512, 1, 1)) == "idempotent"
    assert verdict(s, out=IN + 1024, block=(512, 1, 1)) == "not_idempotent"


@pytest.mark.parametrize("index", [
    "min.s32 %r7, %r5, 15;",                      # out[min(i, 15)]
    "setp.lt.s32 %p2, %r5, 15; selp.b32 %r7, %r5, 15, %p2;",  # out[i < 15 ? i : 15]
    "max.s32 %r8, %r5, 0; min.s32 %r7, %r8, 15;",  # out[clamp(i, 0, 15)]
], ids=["min", "selp", "max+min"])
def test_min_max_and_selp_bound_the_written_range(index):
    s = kernel(index + """
 mul.wide.s32 %rd5, %r7, 4; add.s64 %rd7, %rd3, %rd5;
 mul.wide.u32 %rd8, %r5, 4; add.s64 %rd6, %rd4, %rd8;
 ld.global.u32 %r6, [%rd6]; st.global.u32 [%rd7], %r6;""")
    assert s.kernel_class == "conditional"
    # Writes out[0..15] only; reads in[0..255].
    assert verdict(s, out=IN - 64) == "idempotent"
    assert verdict(s, out=IN - 60) == "not_idempotent"


def test_early_return_guard():
    s = kernel(COPY.format(offset=WIDE).replace("@%p1 bra DONE;", "@%p1 ret;"))
    assert s.kernel_class == "conditional"
    assert verdict(s, out=IN + 4 * 256, block=(512, 1, 1)) == "idempotent"


def test_a_guard_only_bounds_what_it_dominates():
    # if (i < n) x = in[i]; out[i] = x  -- the write runs for every thread.
    s = kernel("""
 mul.wide.s32 %rd5, %r5, 4; mov.u32 %r6, 0;
 setp.ge.s32 %p1, %r5, %r1; @%p1 bra JOIN;
 add.s64 %rd6, %rd4, %rd5; ld.global.u32 %r6, [%rd6];
JOIN:
 add.s64 %rd7, %rd3, %rd5; st.global.u32 [%rd7], %r6;""")
    assert s.kernel_class == "conditional"
    assert verdict(s, out=IN - 4 * 256, block=(512, 1, 1)) == "not_idempotent"
    assert verdict(s, out=IN - 4 * 512, block=(512, 1, 1)) == "idempotent"


def test_not_equal_guard_removes_one_thread():
    # if (i != 0) out[i] = in[0]: with out == in the write never touches in[0].
    s = kernel("""
 setp.eq.s32 %p1, %r5, 0; @%p1 bra DONE;
 ld.global.u32 %r6, [%rd4];
 mul.wide.s32 %rd5, %r5, 4; add.s64 %rd7, %rd3, %rd5; st.global.u32 [%rd7], %r6;
DONE:""")
    assert s.kernel_class == "conditional"
    assert verdict(s, out=IN) == "idempotent"
    assert verdict(s, out=IN - 4) == "not_idempotent"


GRID_STRIDE_32 = """
 mov.u32 %r8, %nctaid.x; mul.lo.s32 %r10, %r8, %r4;
 setp.ge.s32 %p1, %r5, %r1; @%p1 bra DONE;
LOOP:
 mul.wide.s32 %rd5, %r5, 4;
 add.s64 %rd6, %rd4, %rd5; ld.global.u32 %r6, [%rd6];
 add.s64 %rd7, %rd3, %rd5; st.global.u32 [%rd7], %r6;
 add.s32 %r5, %r5, %r10;
 setp.lt.s32 %p2, %r5, %r1; @%p2 bra LOOP;
DONE:"""
GRID_STRIDE_64 = """
 mov.u32 %r8, %nctaid.x; mul.wide.u32 %rd10, %r8, %r4;
 cvt.s64.s32 %rd11, %r1; cvt.s64.s32 %rd12, %r5;
 setp.ge.s64 %p1, %rd12, %rd11; @%p1 bra DONE;
LOOP:
 shl.b64 %rd5, %rd12, 2;
 add.s64 %rd6, %rd4, %rd5; ld.global.u32 %r6, [%rd6];
 add.s64 %rd7, %rd3, %rd5; st.global.u32 [%rd7], %r6;
 add.s64 %rd12, %rd12, %rd10;
 setp.lt.s64 %p2, %rd12, %rd11; @%p2 bra LOOP;
DONE:"""


@pytest.mark.parametrize("body", [GRID_STRIDE_32, GRID_STRIDE_64], ids=["32-bit", "64-bit"])
def test_grid_stride_loop_is_bounded_by_its_exit_test(body):
    s = kernel(body)
    assert s.kernel_class == "conditional"
    # 1000 elements over 2 x 128 threads: the loop covers exactly in[0, 1000).
    assert verdict(s, out=IN + 4000, n=1000, grid=(2, 1, 1), block=(128, 1, 1)) == "idempotent"
    assert verdict(s, out=IN + 3996, n=1000, grid=(2, 1, 1),
                   block=(128, 1, 1)) == "not_idempotent"


def test_unrolled_loop_with_a_remainder_loop():
    # One thread: for (j = 0; j + 2 <= n; j += 2) copy two; for (; j < n; j++) copy one.
    s = kernel("""
 mov.u32 %r12, 0; add.s32 %r13, %r1, -1;
 setp.lt.s32 %p1, %r13, 1; @%p1 bra REM;
MAIN:
 mul.wide.s32 %rd5, %r12, 4;
 add.s64 %rd6, %rd4, %rd5; ld.global.v2.u32 {%r6, %r7}, [%rd6];
 add.s64 %rd7, %rd3, %rd5; st.global.v2.u32 [%rd7], {%r6, %r7};
 add.s32 %r12, %r12, 2;
 setp.lt.s32 %p2, %r12, %r13; @%p2 bra MAIN;
REM:
 setp.ge.s32 %p3, %r12, %r1; @%p3 bra DONE;
TAIL:
 mul.wide.s32 %rd8, %r12, 4;
 add.s64 %rd9, %rd4, %rd8; ld.global.u32 %r6, [%rd9];
 add.s64 %rd13, %rd3, %rd8; st.global.u32 [%rd13], %r6;
 add.s32 %r12, %r12, 1;
 setp.lt.s32 %p4, %r12, %r1; @%p4 bra TAIL;
DONE:""")
    assert s.kernel_class == "conditional"
    kinds = sorted(a.width for a in s.accesses)
    assert kinds == [4, 4, 8, 8]  # vector accesses count 2 x 4 bytes
    assert verdict(s, out=IN + 4 * 9, n=9, block=(1, 1, 1)) == "idempotent"
    assert verdict(s, out=IN + 4 * 8, n=9, block=(1, 1, 1)) == "not_idempotent"


def test_two_dimensional_indexing():
    # x < n (width), y < 32 rows: out[y * n + x] = in[y * n + x]
    s = kernel("""
 mov.u32 %r20, %tid.y; mov.u32 %r21, %ctaid.y; mov.u32 %r22, %ntid.y;
 mad.lo.s32 %r23, %r21, %r22, %r20;
 setp.ge.s32 %p1, %r5, %r1; setp.gt.s32 %p2, %r23, 31; or.pred %p3, %p1, %p2;
 @%p3 bra DONE;
 mad.lo.s32 %r24, %r23, %r1, %r5; mul.wide.s32 %rd5, %r24, 4;
 add.s64 %rd6, %rd4, %rd5; ld.global.u32 %r6, [%rd6];
 add.s64 %rd7, %rd3, %rd5; st.global.u32 [%rd7], %r6;
DONE:""")
    assert s.kernel_class == "conditional"
    shape = dict(n=64, grid=(2, 2, 1), block=(32, 16, 1))
    assert verdict(s, out=IN + 64 * 32 * 4, **shape) == "idempotent"
    assert verdict(s, out=IN + 4, **shape) == "not_idempotent"


def test_read_then_write_of_the_same_element_is_never_idempotent():
    s = kernel("""
 setp.ge.s32 %p1, %r5, %r1; @%p1 bra DONE;
 mul.wide.s32 %rd5, %r5, 4; add.s64 %rd6, %rd3, %rd5;
 ld.global.u32 %r6, [%rd6]; add.s32 %r7, %r6, 1; st.global.u32 [%rd6], %r7;
DONE:""")
    assert s.kernel_class == "never"
    assert "is read" in s.reasons[0] and "same address by the same thread" in s.reasons[0]
    assert verdict(s) == "not_idempotent"



# n < 0 picks, for the whole launch, which of two in-place updates every thread makes.
LAUNCH_WIDE_CHOICE = """
 setp.lt.s32 %p1, %r1, 0; @%p1 bra NEG;
 mul.wide.s32 %rd5, %r5, 4; add.s64 %rd6, %rd3, %rd5;
 ld.global.u32 %r6, [%rd6]; add.s32 %r7, %r6, 1; st.global.u32 [%rd6], %r7;
 bra DONE;
NEG:
 mul.wide.s32 %rd8, %r5, 8; add.s64 %rd9, %rd3, %rd8;
 ld.global.u32 %r8, [%rd9]; shl.b32 %r9, %r8, 1; st.global.u32 [%rd9], %r9;
DONE:"""


def test_read_then_write_on_both_sides_of_a_launch_wide_choice_is_never_idempotent():
    s = kernel(LAUNCH_WIDE_CHOICE)
    assert s.kernel_class == "never", s.reasons
    assert "other path of a launch-wide choice" in s.reasons[0]
    assert verdict(s, n=5) == verdict(s, n=-5) == "not_idempotent"


def test_read_then_write_on_one_side_of_a_launch_wide_choice_is_conditional():
    # The other side writes without reading: a launch with n < 0 may be idempotent.
    s = kernel(LAUNCH_WIDE_CHOICE.replace(
        "ld.global.u32 %r8, [%rd9]; shl.b32 %r9, %r8, 1; st.global.u32 [%rd9], %r9;",
        "st.global.u32 [%rd9], %r5;"))
    assert s.kernel_class == "conditional", s.reasons
    assert verdict(s, n=5) == "not_idempotent"
    assert verdict(s, n=-5) == "idempotent"

def test_a_flag_read_and_cleared_under_its_own_value_is_never_idempotent():
    # if (i < n && flag[i]) flag[i] = 0: the write's guard holds the read's and the value
    # read, so every thread that writes read the same byte first (a BFS frontier mask).
    s = kernel("""
 setp.ge.s32 %p1, %r5, %r1; @%p1 bra DONE;
 cvt.s64.s32 %rd5, %r5; add.s64 %rd6, %rd3, %rd5;
 ld.global.u8 %r6, [%rd6]; setp.eq.s32 %p2, %r6, 0; @%p2 bra DONE;
 mov.u16 %rs1, 0; st.global.u8 [%rd6], %rs1;
DONE:""", decls=" .reg .b16 %rs<3>;")
    assert s.kernel_class == "never"
    assert "same address by the same thread" in s.reasons[0]


def test_a_read_under_a_guard_the_write_lacks_is_not_a_self_clobber():
    # The read runs only when in[i] != 0, the write always: a thread may write without
    # having read, so the pair does not make the kernel "never".
    s = kernel("""
 setp.ge.s32 %p1, %r5, %r1; @%p1 bra DONE;
 cvt.s64.s32 %rd5, %r5; add.s64 %rd6, %rd3, %rd5; add.s64 %rd7, %rd4, %rd5;
 ld.global.u8 %r7, [%rd7]; setp.eq.s32 %p2, %r7, 0; mov.u32 %r6, 0;
 @%p2 bra WRITE;
 ld.global.u8 %r6, [%rd6];
WRITE:
 cvt.u16.u32 %rs1, %r6; st.global.u8 [%rd6], %rs1;
DONE:""", decls=" .reg .b16 %rs<3>;")
    assert s.kernel_class == "conditional"


def test_an_element_read_before_a_loop_and_written_after_it_is_never_idempotent():
    # a[n*n + n + i + n] read, then a triangular loop nest, then a[(n + 1)*n + n + i]
    # written (LU's diagonal block): one element, addresses built differently; the write's
    # guard holds the loop's exit, which Z3 need not use to prove the addresses equal.
    s = kernel("""
 mad.lo.s32 %r10, %r1, %r1, %r1; add.s32 %r11, %r10, %r2; add.s32 %r12, %r11, %r1;
 mul.wide.u32 %rd5, %r12, 4; add.s64 %rd6, %rd3, %rd5; ld.global.f32 %f1, [%rd6];
 mov.u32 %r20, 0;
OUTER:
 setp.le.u32 %p2, %r2, %r20; @%p2 bra SKIP;
 mov.u32 %r21, 0;
INNER:
 setp.ge.u32 %p3, %r21, %r20; @%p3 bra SKIP;
 add.f32 %f1, %f1, %f1; add.s32 %r21, %r21, 1; bra INNER;
SKIP:
 add.s32 %r20, %r20, 1;
 setp.lt.u32 %p1, %r20, 15; @%p1 bra OUTER;
 add.s32 %r13, %r1, 1; mad.lo.s32 %r14, %r13, %r1, %r1; add.s32 %r15, %r14, %r2;
 mul.wide.u32 %rd7, %r15, 4; add.s64 %rd8, %rd3, %rd7; st.global.f32 [%rd8], %f1;""")
    assert s.kernel_class == "never"
    assert "same address by the same thread" in s.reasons[0]
    assert verdict(s) == "not_idempotent"


def test_the_matching_read_is_found_among_many_reads_of_the_same_array():
    # Five reads of a[n*n + k + tid] (another block of the matrix), then a[n*n + n + c]
    # read and a[(n + 1)*n + c] written, c = 16*ctaid + tid: the equal pair is queried
    # first, before the pairs whose addresses do not even name the same registers.
    reads = "".join(f"""
 add.s32 %r{11 + k}, %r10, {k}; add.s32 %r{11 + k}, %r{11 + k}, %r2;
 mul.wide.u32 %rd{10 + k}, %r{11 + k}, 4; add.s64 %rd{10 + k}, %rd3, %rd{10 + k};
 ld.global.f32 %f{2 + k}, [%rd{10 + k}];""" for k in range(5))
    s = kernel(f"""
 mul.lo.s32 %r10, %r1, %r1;{reads}
 shl.b32 %r20, %r3, 4; add.s32 %r21, %r20, %r2;
 add.s32 %r22, %r10, %r1; add.s32 %r22, %r22, %r21;
 mul.wide.u32 %rd20, %r22, 4; add.s64 %rd20, %rd3, %rd20; ld.global.f32 %f1, [%rd20];
 add.s32 %r23, %r1, 1; mad.lo.s32 %r24, %r23, %r1, %r21;
 mul.wide.u32 %rd21, %r24, 4; add.s64 %rd21, %rd3, %rd21; st.global.f32 [%rd21], %f1;""")
    assert s.kernel_class == "never"
    assert "same address by the same thread" in s.reasons[0]


# ----------------------------------------------------------------------- device functions

TWICE = """
.func (.param .b32 func_retval0) twice(.param .b32 twice_param_0)
{
 .reg .b32 %r<3>;
 ld.param.b32 %r1, [twice_param_0]; shl.b32 %r2, %r1, 1;
 st.param.b32 [func_retval0], %r2; ret;
}
"""
STORE = """
.func store(.param .b64 store_param_0, .param .b32 store_param_1)
{
 .reg .b32 %r<3>; .reg .b64 %rd<3>;
 ld.param.b64 %rd1, [store_param_0]; ld.param.b32 %r1, [store_param_1];
 st.global.u32 [%rd1], %r1; ret;
}
"""


def test_a_noinline_call_returning_an_index_is_inlined():
    # out[2 * i] = in[i], with 2 * i computed by the (not inlined by nvcc) device function.
    s = kernel("""
 { .param .b32 param0; st.param.b32 [param0], %r5; .param .b32 retval0;
   call.uni (retval0), twice, (param0); ld.param.b32 %r7, [retval0]; }
 mul.wide.s32 %rd5, %r7, 4; add.s64 %rd7, %rd3, %rd5;
 mul.wide.s32 %rd8, %r5, 4; add.s64 %rd6, %rd4, %rd8;
 ld.global.u32 %r6, [%rd6]; st.global.u32 [%rd7], %r6;""", before=TWICE)
    assert s.kernel_class == "conditional"
    # Writes out[0, 2, ..., 510] (bytes [out, out + 2044)), reads in[0..255].
    assert verdict(s, out=IN - 2044) == "idempotent"
    assert verdict(s, out=IN - 2040) == "not_idempotent"


def test_a_callee_that_writes_global_memory_is_seen():
    s = kernel("""
 mul.wide.s32 %rd5, %r5, 4; add.s64 %rd6, %rd4, %rd5; ld.global.u32 %r6, [%rd6];
 add.s64 %rd7, %rd3, %rd5;
 { .param .b64 param0; st.param.b64 [param0], %rd7; .param .b32 param1;
   st.param.b32 [param1], %r6; call.uni store, (param0, param1); }""", before=STORE)
    assert s.kernel_class == "conditional"
    write = next(a for a in s.accesses if a.kind == "write")
    assert write.function == "store" and write.call_path
    assert "inlined from store" in s.reasons[0]
    assert verdict(s) == "idempotent"
    assert verdict(s, out=IN) == "not_idempotent"


SWAP = """
.func (.reg .v2 .b64 r) swap(.reg .v2 .b64 p)
{
 mov.v2.b64 r, {p.y, p.x}; ret;
}
"""
STORE_X = """
.func store_x(.reg .v2 .b64 p, .reg .b32 v)
{
 st.global.u32 [p.x], v; ret;
}
"""
# %v = {&out[i], &in[i]} after in[i] is read.
VECTOR = """
 .reg .v2 .b64 %v;
 mul.wide.s32 %rd5, %r5, 4; add.s64 %rd6, %rd4, %rd5; add.s64 %rd7, %rd3, %rd5;
 ld.global.u32 %r6, [%rd6]; add.s32 %r7, %r6, 1;
 mov.b64 %v.x, %rd7; mov.b64 %v.y, %rd6;
"""


def test_a_vector_register_a_call_returns_into_is_redefined():
    # swap returns {&in[i], &out[i]} into %v: the store writes in[i] after reading it. The
    # .reg return value is not followed, but %v.x must not keep its value from before the
    # call (that would prove a write to out[i]).
    s = kernel(VECTOR + """
 call.uni (%v), swap, (%v);
 st.global.u32 [%v.x], %r7;""", before=SWAP)
    assert verdict(s) != "idempotent", s.reasons


def test_a_vector_register_argument_binds_element_by_element():
    # store_x writes out[i] through p.x, the first element of the vector argument.
    s = kernel(VECTOR + """
 call.uni store_x, (%v, %r7);""", before=STORE_X)
    assert s.kernel_class == "conditional", s.reasons
    write = next(a for a in s.accesses if a.kind == "write")
    assert write.function == "store_x"
    assert verdict(s) == "idempotent"
    assert verdict(s, out=IN) == "not_idempotent"


# ----------------------------------------------------------------------- generic addresses

SMEM = ".shared .align 4 .b8 smem[4096];"
READ_IN = " mul.wide.s32 %rd5, %r5, 4; add.s64 %rd6, %rd4, %rd5; ld.global.u32 %r6, [%rd6];\n"


def test_a_local_variable_as_a_generic_address_is_not_a_global_access():
    # st.u32 [lx] is a store to the generic address of lx (ISA 6.4.1): local memory.
    s = kernel(READ_IN + """
 st.u32 [lx], %r6; ld.u32 %r7, [lx];
 add.s64 %rd7, %rd3, %rd5; st.global.u32 [%rd7], %r7;""",
               decls=".local .align 4 .b8 lx[8];")
    assert [a.instr.opcode for a in s.accesses if a.space == "generic"] == []
    assert verdict(s) == "idempotent" and verdict(s, out=IN) == "not_idempotent"


def test_a_function_variable_shadows_the_module_variable_of_its_name():
    # The kernel's own .global buf hides the module's .shared buf: the generic store writes
    # global memory, at an address the analysis does not follow.
    s = kernel(READ_IN + " st.u32 [buf], %r6;", before=".shared .align 4 .b8 buf[64];",
               decls=".global .align 4 .b8 buf[64];")
    assert verdict(s) != "idempotent", s.reasons


def test_a_generic_store_to_shared_memory_is_not_a_global_write():
    s = kernel(READ_IN + """
 mov.u64 %rd20, smem; cvta.shared.u64 %rd21, %rd20;
 add.s64 %rd22, %rd21, %rd5; st.u32 [%rd22], %r6;""", decls=SMEM)
    assert s.kernel_class == "always"
    assert s.reasons == ("no global write",)


@pytest.mark.parametrize("mix", [
    "add.s64 %rd22, %rd21, %rd3;",           # shared base + a 64-bit parameter
    "add.s64 %rd22, %rd3, %rd21;",           # the same, operands swapped
    "ld.global.u64 %rd23, [%rd4]; add.s64 %rd22, %rd21, %rd23;",  # + a loaded value
    "sub.s64 %rd22, %rd3, %rd21;",           # a difference with the shared base second
    "add.s64 %rd24, %rd21, %rd5; add.s64 %rd22, %rd24, %rd21;",  # two shared bases
], ids=["param", "swapped", "loaded", "sub", "two-bases"])
def test_a_shared_base_mixed_with_a_pointer_of_unknown_provenance_is_possibly_global(mix):
    s = kernel(READ_IN + """
 mov.u64 %rd20, smem; cvta.shared.u64 %rd21, %rd20;
 """ + mix + " st.u32 [%rd22], %r6;", decls=SMEM)
    writes = [a for a in s.accesses if a.kind == "write"]
    assert len(writes) == 1 and writes[0].space == "generic"
    assert s.kernel_class in ("not_proven", "conditional")


def test_a_register_reloaded_after_holding_a_shared_address_is_possibly_global():
    s = kernel(READ_IN + """
 mov.u64 %rd20, smem; cvta.shared.u64 %rd22, %rd20;
 ld.param.u64 %rd22, [k_param_0]; st.u32 [%rd22], %r6;""", decls=SMEM)
    assert [a.kind for a in s.accesses] == ["read", "write"]
    assert s.kernel_class == "conditional"
    assert verdict(s, out=IN) == "not_idempotent"


def test_a_loop_carried_pointer_that_leaves_the_shared_window_is_possibly_global():
    # p = shared; for (...) { *p = x; p = out; }: the second iteration stores to out.
    s = kernel(READ_IN + """
 mov.u64 %rd20, smem; cvta.shared.u64 %rd22, %rd20; mov.u32 %r12, 0;
LOOP:
 st.u32 [%rd22], %r6;
 mov.u64 %rd22, %rd3;
 add.s32 %r12, %r12, 1; setp.lt.s32 %p2, %r12, %r1; @%p2 bra LOOP;""", decls=SMEM)
    assert [a.kind for a in s.accesses] == ["read", "write"]
    assert s.kernel_class != "always"


def test_a_loop_carried_shared_pointer_stays_shared():
    s = kernel(READ_IN + """
 mov.u64 %rd20, smem; cvta.shared.u64 %rd22, %rd20; mov.u32 %r12, 0;
LOOP:
 st.u32 [%rd22], %r6;
 add.s64 %rd22, %rd22, 4;
 add.s32 %r12, %r12, 1; setp.lt.s32 %p2, %r12, %r1; @%p2 bra LOOP;""", decls=SMEM)
    assert s.kernel_class == "always"


# ----------------------------------------------------------------------- not modelled

@pytest.mark.parametrize(("body", "reason"), [
    ("prototype_0 : .callprototype ()_ (.param .b32 _);\n"
     " { .param .b32 param0; st.param.b32 [param0], %r5;\n"
     "   call %rd3, (param0), prototype_0; }", "indirect call"),
    ("frobnicate.b32 %r7, %r5;", "unknown instruction frobnicate"),
    ("st.global.u32 [%rd3], %r5; vendor.asm.store [%rd4], %r5;", "unknown instruction vendor"),
    ("sust.b.1d.b32.trap [%rd1, {%r5}], {%r5};", "unmodelled instruction sust"),
    ("mapa.shared::cluster.u32 %r7, %r5, 1; st.shared::cluster.u32 [%r7], %r5;",
     "distributed shared memory access"),
    ("ld.shared::cluster.u32 %r7, [%r5];", "distributed shared memory access"),
    ("st.shared::cluster.u32 [%r5], %r1;", "distributed shared memory access"),
    ("cp.async.bulk.tensor.1d.global.shared::cta.bulk_group [%rd1, {%r5}], [%r5];",
     "bulk tensor store to global memory"),
    ("cp.async.bulk.global.shared::cta.bulk_group [%rd3], [%r5], %r1;",
     "bulk copy to global memory of unknown size"),
    ("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [%rd3], [%r5], 64;",
     "bulk reduction into global memory"),
    ("st.async.shared::cluster.mbarrier::complete_tx::bytes.u32 [%r5], %r5, [%r5];",
     "distributed shared memory access"),
    ("red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 "
     "[%r5], %r5, [%r5];", "distributed shared memory access"),
    ("multimem.st.global.u32 [%rd3], %r5;", "multimem access"),
    ("wmma.store.d.sync.aligned.row.m16n16k16.global.f32 [%rd3], "
     "{%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}, 16;", "matrix store to global memory"),
], ids=["callprototype", "unknown", "inline-asm-like", "sust", "mapa", "ld.cluster",
        "st.cluster", "bulk-tensor", "bulk", "bulk-reduce", "st.async", "red.async",
        "multimem", "wmma.store"])
def test_what_is_not_modelled_is_not_proven_with_the_reason(body, reason):
    s = kernel(body)
    assert s.kernel_class == "not_proven"
    assert any(reason in r for r in s.reasons), s.reasons
    assert verdict(s, out=IN, inp=OUT) == "not_proven"


def test_a_texture_read_next_to_a_global_write_is_not_proven():
    s = kernel("""
 tex.1d.v4.s32.s32 {%r6, %r7, %r8, %r9}, [%rd2, {%r5}];
 mul.wide.s32 %rd5, %r5, 4; add.s64 %rd7, %rd3, %rd5; st.global.u32 [%rd7], %r6;""")
    assert s.kernel_class == "not_proven"
    assert "texture read" in s.reasons[0]


def test_a_barrier_reduction_result_is_not_a_stale_value():
    # %r5 = i, then bar.red.popc overwrites it: the store index is no longer i.
    s = kernel("""
 setp.ne.s32 %p1, %r5, 0; bar.red.popc.u32 %r5, 0, %p1;
 mul.wide.u32 %rd5, %r5, 4; ld.global.u32 %r6, [%rd4];
 add.s64 %rd7, %rd3, %rd5; st.global.u32 [%rd7], %r6;""")
    write = next(a for a in s.accesses if a.kind == "write")
    assert "%tid.x" not in write.address
    assert s.kernel_class == "conditional"


def test_read_then_write_through_differently_computed_addresses_is_never_idempotent():
    # a[i] read through mul.wide, written through cvt + shl: equal addresses, proved by Z3.
    s = kernel("""
 setp.ge.s32 %p1, %r5, %r1; @%p1 bra DONE;
 mul.wide.s32 %rd5, %r5, 4; add.s64 %rd6, %rd3, %rd5; ld.global.u32 %r6, [%rd6];
 cvt.s64.s32 %rd8, %r5; shl.b64 %rd9, %rd8, 2; add.s64 %rd10, %rd9, %rd3;
 add.s32 %r7, %r6, 1; st.global.u32 [%rd10], %r7;
DONE:""")
    assert s.kernel_class == "never"
    assert "same address by the same thread" in s.reasons[0]


def test_a_shifted_write_is_not_claimed_to_hit_the_read_address():
    # a[i + 1] = a[i] + 1: not the same bytes for one thread, so not "never" by that rule.
    s = kernel("""
 setp.ge.s32 %p1, %r5, %r1; @%p1 bra DONE;
 mul.wide.s32 %rd5, %r5, 4; add.s64 %rd6, %rd3, %rd5; ld.global.u32 %r6, [%rd6];
 add.s32 %r7, %r6, 1; st.global.u32 [%rd6+4], %r7;
DONE:""")
    assert s.kernel_class == "conditional"
    assert verdict(s, n=256, block=(1, 1, 1)) == "idempotent"
    assert verdict(s, n=256) == "not_idempotent"


# ----------------------------------------------------------------------- atomics

ATOMIC_MAX = """
.func (.param .b32 func_retval0) amax(.param .b64 amax_param_0, .param .b32 amax_param_1)
{
 .reg .b32 %r<3>; .reg .b64 %rd<2>;
 ld.param.u64 %rd1, [amax_param_0]; ld.param.u32 %r1, [amax_param_1];
 atom.max.s32 %r2, [%rd1], %r1;
 st.param.b32 [func_retval0+0], %r2; ret;
}
"""
CALL_AMAX = """
 { .param .b64 param0; st.param.b64 [param0], %rd1; .param .b32 param1;
   st.param.b32 [param1], %r5; .param .b32 retval0;
   call.uni (retval0), amax, (param0, param1); ld.param.b32 %r9, [retval0+0]; }
"""


def test_an_atomic_whose_old_value_is_returned_but_unused_is_idempotent_in_effect():
    s = kernel(CALL_AMAX, before=ATOMIC_MAX)
    assert s.kernel_class == "always"
    assert s.accesses[0].rule.startswith("atomic max: idempotent in effect")


def test_an_atomic_whose_returned_old_value_the_caller_uses_is_not():
    s = kernel(CALL_AMAX + " mul.wide.s32 %rd5, %r5, 4; add.s64 %rd7, %rd4, %rd5;"
               " st.global.u32 [%rd7], %r9;", before=ATOMIC_MAX)
    assert s.kernel_class == "never"
    assert "returned old value is used" in s.reasons[0]
    assert verdict(s) == "not_idempotent"


def test_a_direct_atomic_add_is_never_idempotent():
    s = kernel("red.global.add.u32 [%rd3], 1;")
    assert s.kernel_class == "never"
    assert "atomic add: non-idempotent read-modify-write" in s.reasons[0]


def test_a_kernel_an_unknown_write_leaves_not_proven_asks_no_pair_of_the_solver(
        monkeypatch):
    # out[i + 1] = out[i] (a same-base pair only Z3 could look at), then a store through a
    # pointer read from memory: not proven whatever the pair is, so the pair is not asked
    # about and the launch check, which decides no instance, holds none.
    import kernelcheck.analysis.summary as summary_module

    asked = []
    real = summary_module.prove_never_overlap
    monkeypatch.setattr(summary_module, "prove_never_overlap",
                        lambda *a, **k: asked.append(a) or real(*a, **k))
    body = """
 mul.wide.s32 %rd5, %r5, 4; add.s64 %rd6, %rd3, %rd5;
 ld.global.u32 %r6, [%rd6]; st.global.u32 [%rd6+4], %r6;
 ld.global.u64 %rd7, [%rd4]; st.global.u32 [%rd7], %r6;"""
    summary = kernel(body)
    assert summary.kernel_class == "not_proven"
    assert any("unknown address" in r for r in summary.reasons)
    assert not asked and summary.launch_check.pairs == ()
    assert verdict(summary) == "not_proven"
    # Without the unknown write the same pair is asked about and kept.
    summary = kernel(body.replace("st.global.u32 [%rd7], %r6;", ""))
    assert summary.kernel_class == "conditional" and asked
    assert summary.launch_check.pairs
