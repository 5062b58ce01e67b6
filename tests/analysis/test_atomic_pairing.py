"""Atomics that are idempotent in effect still read their location: pairing rules."""

from __future__ import annotations

from tests.analysis.test_rules import OUT, kernel, verdict

# mul.wide offset of i, guard i < n.
GUARD = """
 setp.ge.s32 %p1, %r5, %r1;
 @%p1 bra DONE;
 mul.wide.s32 %rd5, %r5, 4;
 add.s64 %rd7, %rd3, %rd5;
"""


def test_plain_store_and_atomic_max_on_the_same_bytes_are_paired():
    # A plain store and an atomic max on the same word of `in`.
    s = kernel(GUARD + """
 st.global.u32 [%rd4], 3;
 atom.global.max.s32 %r9, [%rd4], 7;
DONE:""")
    assert s.kernel_class != "always"
    assert verdict(s) != "idempotent"


def test_the_same_max_by_many_threads_is_idempotent_in_effect():
    s = kernel(GUARD + """
 red.global.max.s32 [%rd4], 7;
DONE:""")
    assert s.kernel_class == "always"
    assert verdict(s) == "idempotent"


def test_max_and_min_on_the_same_location_are_paired():
    s = kernel(GUARD + """
 red.global.max.s32 [%rd4], 7;
 red.global.min.s32 [%rd4], 3;
DONE:""")
    assert verdict(s, inp=OUT + 64) != "idempotent"


def test_exch_of_a_thread_index_is_not_idempotent_in_effect():
    s = kernel(GUARD + """
 atom.global.exch.b32 %r9, [%rd4], %r5;
DONE:""")
    assert s.kernel_class == "never"
    assert any("differs between threads or runs" in r for r in s.reasons)


def test_exch_of_the_clock_is_not_idempotent_in_effect():
    s = kernel(GUARD + """
 mov.u32 %r9, %clock;
 atom.global.exch.b32 %r10, [%rd4], %r9;
DONE:""")
    assert s.kernel_class == "never"


def test_exch_of_a_parameter_is_idempotent_in_effect():
    s = kernel(GUARD + """
 atom.global.exch.b32 %r10, [%rd4], %r1;
DONE:""")
    assert s.kernel_class == "always"
