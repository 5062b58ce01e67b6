"""Store-to-load forwarding through the local depot of -O0/-G builds."""

import pytest

from tests.analysis.test_rules import OUT, kernel, verdict

DEPOT = " .local .align 8 .b8 __local_depot0[32]; .reg .b64 %SP; .reg .b64 %SPL;"
FRAME = """
 mov.u64 %SPL, __local_depot0;
 cvta.local.u64 %SP, %SPL;
 st.u64 [%SP+8], %rd3;
 st.u64 [%SP+16], %rd4;
"""
# out[i] = in[i] through pointers reloaded from the stack; {between} runs before the reload.
COPY = FRAME + """{between}
 setp.ge.s32 %p1, %r5, %r1;
 @%p1 bra DONE;
 ld.u64 %rd10, [%SP+8];
 ld.u64 %rd11, [%SP+16];
 mul.wide.s32 %rd12, %r5, 4;
 add.s64 %rd13, %rd11, %rd12;
 ld.global.f32 %f1, [%rd13];
 add.s64 %rd14, %rd10, %rd12;
 st.global.f32 [%rd14], %f1;
DONE:"""


def test_a_reloaded_pointer_is_the_stored_one():
    s = kernel(COPY.format(between=""), decls=DEPOT)
    assert s.kernel_class == "conditional"
    assert verdict(s) == "idempotent"
    assert verdict(s, inp=OUT) == "not_idempotent"


def test_in_place_update_through_the_stack_is_never_idempotent():
    s = kernel(FRAME + """
 setp.ge.s32 %p1, %r5, %r1;
 @%p1 bra DONE;
 ld.u64 %rd10, [%SP+8];
 mul.wide.s32 %rd12, %r5, 4;
 add.s64 %rd13, %rd10, %rd12;
 ld.f32 %f1, [%rd13];
 add.f32 %f2, %f1, 0f3F800000;
 st.f32 [%rd13], %f2;
DONE:""", decls=DEPOT)
    assert s.kernel_class == "never"


@pytest.mark.parametrize("between", [
    # overwritten with an unknown value (a loaded one), overlapping a byte of the slot
    " ld.global.u32 %r20, [%rd4];\n st.u32 [%SP+12], %r20;",
    # a store through a pointer of unknown provenance may hit the stack
    " ld.global.u64 %rd20, [%rd4];\n st.u64 [%rd20], %rd4;",
    # a predicated store may or may not replace the value
    " setp.eq.s32 %p3, %r2, 0;\n @%p3 st.u64 [%SP+8], %rd4;",
    # a local store through an index
    " mul.wide.s32 %rd21, %r2, 8;\n add.s64 %rd22, %SPL, %rd21;\n st.local.u64 [%rd22], %rd4;",
])
def test_a_slot_that_may_have_changed_is_not_forwarded(between):
    s = kernel(COPY.format(between=between), decls=DEPOT)
    assert s.kernel_class == "not_proven"
    assert any("unknown address" in r for r in s.reasons)


def test_different_values_on_two_paths_are_not_forwarded():
    s = kernel(COPY.format(between="""
 setp.eq.s32 %p3, %r2, 0;
 @%p3 bra OTHER;
 bra.uni JOIN;
OTHER:
 ld.global.u64 %rd20, [%rd4];
 st.u64 [%SP+8], %rd20;
JOIN:"""), decls=DEPOT)
    assert s.kernel_class == "not_proven"


def test_the_same_value_stored_on_both_paths_is_forwarded():
    s = kernel(COPY.format(between="""
 setp.eq.s32 %p3, %r2, 0;
 @%p3 bra OTHER;
 st.u64 [%SP+8], %rd3;
 bra.uni JOIN;
OTHER:
 st.u64 [%SP+8], %rd3;
JOIN:"""), decls=DEPOT)
    assert s.kernel_class == "conditional" and verdict(s) == "idempotent"


def test_a_loop_that_writes_the_stack_forgets_it():
    s = kernel(COPY.format(between="""
 mov.u32 %r30, 0;
LOOP:
 ld.global.u64 %rd20, [%rd4];
 st.u64 [%SP+8], %rd20;
 add.s32 %r30, %r30, 1;
 setp.lt.s32 %p4, %r30, 4;
 @%p4 bra LOOP;"""), decls=DEPOT)
    assert s.kernel_class == "not_proven"


def test_a_call_forgets_the_stack():
    callee = """
.func touch(.param .b64 touch_param_0)
{
 .reg .b64 %rd<3>;
 ld.param.u64 %rd1, [touch_param_0];
 st.u64 [%rd1], %rd1;
 ret;
}
"""
    s = kernel(COPY.format(between="""
 { .param .b64 param0;
 st.param.b64 [param0], %SP;
 call.uni touch, (param0); }"""), before=callee, decls=DEPOT)
    assert s.kernel_class == "not_proven"


def test_a_narrower_reload_is_not_the_pointer():
    s = kernel(FRAME + """
 ld.u32 %r20, [%SP+8];
 cvt.u64.u32 %rd10, %r20;
 st.global.u32 [%rd10], %r1;""", decls=DEPOT)
    assert s.kernel_class == "not_proven"


@pytest.mark.parametrize("build", ["O0G", "nvrtc12_G"])
def test_unoptimized_builds_of_struct_kernels_get_their_classes(build):
    from tests.analysis.test_fixtures import EXPECTED, ROOT, summaries

    _, found = summaries(ROOT / "ptx" / build / "structs_calls.ptx")
    for name in ("scale_buf", "span_axpy_inplace"):
        assert found[name].kernel_class == EXPECTED[name]["class"], name
