"""The exact lattice test against brute-force enumeration over small ranges."""

import itertools
import struct

from hypothesis import example, given
from hypothesis import strategies as st

from kernelcheck.launch.compiled import _lattice_sym
from kernelcheck.launch.evaluate import lattice_may_overlap

term = st.tuples(st.integers(-12, 12), st.integers(-4, 4), st.integers(0, 5)).map(
    lambda t: (t[0], t[1], t[1] + t[2]))


@given(st.integers(-40, 40), st.lists(term, max_size=3), st.integers(1, 8), st.integers(1, 8))
@example(4, [(8, 0, 3), (-8, 0, 3)], 4, 4)
def test_never_disjoint_when_brute_force_overlaps(d, terms, ww, wr):
    lo, hi = -(ww - 1), wr - 1
    brute = any(lo <= d + sum(s * z for (s, _, _), z in zip(terms, zs, strict=True)) <= hi
                for zs in itertools.product(*(range(a, b + 1) for _, a, b in terms)))
    answer = lattice_may_overlap(d, terms, lo, hi)
    if brute:
        assert answer
    else:
        assert not answer  # the test is exact within its budget on small ranges


@given(st.integers(-200, 200), st.integers(-12, 12), st.integers(-6, 6), st.integers(0, 9),
       st.integers(1, 8), st.integers(1, 8))
def test_closed_form_of_equal_atoms_is_the_lattice_answer(d, c, zlo, span, ww, wr):
    lo, hi = -(ww - 1), wr - 1
    expected = lattice_may_overlap(d, [(c, zlo, zlo + span), (-c, zlo, zlo + span)], lo, hi)
    assert _lattice_sym(d, c, span, lo, hi) == expected


multiple = st.tuples(st.integers(1, 6), st.integers(1, 5), st.integers(-3, 3),
                     st.integers(0, 6))


@given(st.integers(-150, 150), st.lists(multiple, min_size=2, max_size=3), st.integers(1, 8))
def test_folded_multiples_are_exact(d, nested, width):
    # s*x + s*k*y + ...: strides that divide one another, as grid-stride and unrolled loops
    # produce; folding them must keep the answer exact.
    terms, s = [], 1
    for base, k, zlo, span in nested:
        s = s * k if terms else base
        terms.append((s, zlo, zlo + span))
    lo, hi = -(width - 1), width - 1
    brute = any(lo <= d + sum(c * z for (c, _, _), z in zip(terms, zs, strict=True)) <= hi
                for zs in itertools.product(*(range(a, b + 1) for _, a, b in terms)))
    assert lattice_may_overlap(d, terms, lo, hi) == brute



#: ``out[(32*n + off) mod 2**32] = in[0] + 1`` for the threads below ``n``: the index wraps
#: at 32 bits, and ``n`` is bounded below by the thread's index (the guard), so the index
#: is not one launch constant for the affine form, though it is one value at launch.
WRAPPED_INDEX_PTX = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 k_out, .param .u64 k_off, .param .u32 k_n, .param .u64 k_in)
{
  .reg .pred %p<2>;
  .reg .b16 %h<3>;
  .reg .b32 %r<9>;
  .reg .b64 %rd<10>;
  ld.param.u64 %rd1, [k_out];
  ld.param.u64 %rd2, [k_off];
  ld.param.u32 %r1, [k_n];
  ld.param.u64 %rd3, [k_in];
  mov.u32 %r2, %tid.x;
  setp.ge.s32 %p1, %r2, %r1;
  @%p1 bra DONE;
  cvta.to.global.u64 %rd4, %rd3;
  ld.global.u16 %h1, [%rd4];
  add.s16 %h2, %h1, 1;
  shl.b32 %r5, %r1, 5;
  cvt.u32.u64 %r6, %rd2;
  add.s32 %r7, %r5, %r6;
  mul.wide.u32 %rd5, %r7, 2;
  cvta.to.global.u64 %rd6, %rd1;
  add.s64 %rd7, %rd6, %rd5;
  st.global.u16 [%rd7], %h2;
DONE:
  ret;
}
"""
OUT = 0x7F0000000000


def wrapped_index_check():
    from kernelcheck.analysis.summary import analyze_kernel
    from kernelcheck.ptx.parser import parse_ptx

    module = parse_ptx(WRAPPED_INDEX_PTX)
    return analyze_kernel(module, module.get_function("k")).launch_check


def wrapped_index_instances():
    """``(params, idempotent)`` for one thread: the store address computed as the machine
    does (the index wraps at 32 bits), the read placed on it or beside it."""
    out = []
    for n, off in ((0x8000001, 0x40), (3, 0x40), (0x7FFFFFFF, 0x1_0000_0010), (1, 0)):
        stored = OUT + 2 * ((32 * n + (off & 0xFFFFFFFF)) & 0xFFFFFFFF)
        for read, idempotent in ((stored, False), (stored + 1, False), (stored + 2, True),
                                 (stored - 0x100, True)):
            out.append((struct.pack("<QQIIQ", OUT, off, n, 0, read), idempotent))
    return out


def test_a_wrap_that_folds_a_thread_bounded_value_keeps_the_lattice_test_out():
    # The affine form looks through the 32-bit wrap (the bounded n is not a launch constant
    # for it), so the form is 64*n + 2*off past the wrap: the lattice test on it had the
    # store far from the read and answered "idempotent" where the two meet.
    from kernelcheck.launch.compiled import compile_check
    from kernelcheck.launch.evaluate import evaluate

    check = wrapped_index_check()
    fast = compile_check(check)
    for params, idempotent in wrapped_index_instances():
        expected = "idempotent" if idempotent else "not_idempotent"
        assert evaluate(check, params, (1, 1, 1), (1, 1, 1)).verdict == expected, params
        assert fast(params, (1, 1, 1), (1, 1, 1)).verdict == expected, params
