"""The clobbered set recovery saves is complete, or None when it cannot be known."""

from __future__ import annotations

import dataclasses

from kernelcheck.launch.evaluate import evaluate, evaluate_general, pack_params
from tests.analysis.test_rules import IN, OUT, kernel

GUARD = """
 setp.ge.s32 %p1, %r5, %r1;
 @%p1 bra DONE;
 mul.wide.s32 %rd5, %r5, 4;
 add.s64 %rd7, %rd3, %rd5;
 add.s64 %rd8, %rd4, %rd5;
"""


def _params(out=OUT, inp=IN, n=64):
    return pack_params([(0, 8, out), (8, 8, inp), (16, 4, n)], None)


def test_every_non_idempotent_atomic_is_in_the_clobbered_set():
    s = kernel(GUARD + """
 red.global.add.u32 [%rd7], 1;
 red.global.add.u32 [%rd8], 1;
DONE:""")
    for run in (evaluate, evaluate_general):
        v = run(s.launch_check, _params(), (1, 1, 1), (64, 1, 1))
        assert v.verdict == "not_idempotent" and v.decided_by == "non_idempotent_atomic"
        assert v.clobbered is not None
        assert v.clobbered.ranges == ((OUT, OUT + 256), (IN, IN + 256))


def test_an_unknown_pair_makes_the_clobbered_set_unknown():
    # out[i] = in[i] + 1 overlaps when out == in; the second store goes through an index
    # loaded from memory, so without an allocation table its bytes are unknown.
    s = kernel(GUARD + """
 ld.global.u32 %r6, [%rd8];
 add.s32 %r7, %r6, 1;
 st.global.u32 [%rd7], %r7;
 mul.wide.s32 %rd9, %r6, 4;
 add.s64 %rd10, %rd3, %rd9;
 st.global.u32 [%rd10], %r7;
DONE:""")
    v = evaluate_general(s.launch_check, _params(inp=OUT), (1, 1, 1), (64, 1, 1))
    assert v.verdict == "not_idempotent"
    assert v.clobbered is None


def test_replace_does_not_carry_the_compiled_function():
    s = kernel(GUARD + """
 ld.global.u32 %r6, [%rd8];
 st.global.u32 [%rd7], %r6;
DONE:""")
    check = s.launch_check
    evaluate(check, _params(), (1, 1, 1), (64, 1, 1))
    assert check.compiled is not None
    changed = dataclasses.replace(check, pairs=())
    assert changed.compiled is None
    assert evaluate(changed, _params(inp=OUT), (1, 1, 1), (64, 1, 1)).verdict == "idempotent"
