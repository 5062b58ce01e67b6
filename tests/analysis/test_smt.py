"""Z3 proofs of never-overlapping accesses: proved where true, refused where false."""

import subprocess
import sys

import pytest

from kernelcheck.analysis.lower import apply_guards
from kernelcheck.analysis.smt import load_z3, prove_never_overlap
from kernelcheck.analysis.terms import Cmp, Const, Param, Special, add, mul, wrap

P = Param("a", 0, 8)
N = Param("n", 8, 4)
TID = Special("%tid.x")


def _addr(index, guard=()):
    return apply_guards(wrap(add(P, mul(Const(4), wrap(index, 32, True))), 64, False), guard)


def test_first_and_second_half_never_meet_under_their_guards():
    # a[i] for i < n written, a[(long)i + n] read (i < n): disjoint for every n and thread.
    i = TID
    n = wrap(N, 32, True)
    write = _addr(i, (Cmp("lt", wrap(i, 32, True), n),))
    # The read index is widened before the addition (no 32-bit wrap can bring it back).
    read = apply_guards(wrap(add(P, mul(Const(4), add(wrap(i, 32, True), n))), 64, False),
                        (Cmp("lt", wrap(i, 32, True), n),))
    result = prove_never_overlap(write, 4, read, 4, timeout_ms=10_000)
    assert result.proved, result


def test_an_overlap_for_some_instance_is_not_proved():
    write = _addr(TID)
    read = _addr(add(TID, Const(1)))  # a[tid] = f(a[tid + 1]): threads meet
    result = prove_never_overlap(write, 4, read, 4)
    assert not result.proved and result.status == "sat"


def test_unencodable_terms_are_refused_not_guessed():
    from kernelcheck.analysis.terms import Iter

    result = prove_never_overlap(_addr(Iter(3, None)), 4, _addr(TID), 4)
    assert not result.proved and result.status == "not encoded"


def test_importing_kernelcheck_does_not_import_z3():
    code = "import kernelcheck, kernelcheck.analysis.summary, sys; print('z3' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "False"


def test_a_wrapped_index_is_encoded_exactly():
    # i = ctaid * ntid + tid as a 32-bit int, a[wrap(i + 2**31)] against a[wrap(i)]: thread
    # i = 0 writes a[-2**31], which thread i = 2**31 reads. Only an exact wrap finds it.
    from kernelcheck.analysis.terms import Special as S

    i = add(mul(S("%ctaid.x"), S("%ntid.x")), TID)
    result = prove_never_overlap(_addr(add(i, Const(1 << 31))), 4, _addr(i), 4,
                                 timeout_ms=5_000)
    assert not result.proved
    # With threads limited to one block the indices cannot meet: proved.
    assert prove_never_overlap(_addr(add(TID, Const(1 << 31))), 4, _addr(TID), 4,
                               timeout_ms=5_000).proved


def test_identical_queries_are_answered_once_per_cache():
    from kernelcheck.analysis.smt import prove_same_address

    cache: dict = {}
    first = prove_never_overlap(_addr(TID), 4, _addr(add(TID, Const(2))), 4, cache=cache)
    again = prove_never_overlap(_addr(TID), 4, _addr(add(TID, Const(2))), 4, cache=cache)
    assert first.proved == again.proved and again.seconds == 0.0
    assert prove_same_address(_addr(TID), _addr(TID)).proved
    assert not prove_same_address(_addr(TID), _addr(add(TID, Const(1)))).proved


def test_a_kernel_s_queries_reuse_witnesses_and_still_find_every_proof():
    # The queries of one kernel, in the order an in-place kernel asks them: pairs that meet
    # (each thread reads the word the next thread stores, then a double word there, then
    # the word two threads on) and, between them, pairs their guards keep apart. One cache
    # for all gives each the answer it gets alone; a pair that meets the way an earlier one
    # did is answered by that execution, without a search.
    i, n = wrap(TID, 32, True), wrap(N, 32, True)
    low = (Cmp("lt", i, n),)
    apart = (_addr(TID, low), 4,
             apply_guards(wrap(add(P, mul(Const(4), add(i, n))), 64, False), low), 4)
    after = _addr(add(TID, Const(1)))
    queries = [(_addr(TID), 4, after, 4), apart, (_addr(TID), 4, after, 8),
               (_addr(TID), 4, _addr(add(TID, Const(2))), 4), apart[2:] + apart[:2]]
    alone = [prove_never_overlap(*q, timeout_ms=10_000) for q in queries]
    cache: dict = {}
    shared = [prove_never_overlap(*q, timeout_ms=10_000, cache=cache) for q in queries]
    assert [r.proved for r in shared] == [r.proved for r in alone] == [
        False, True, False, False, True]
    assert any(r.status == "sat (an earlier witness)" for r in shared)


def test_ctrl_c_during_a_check_stops_the_program_when_the_check_ends():
    # Z3's own handler would take the SIGINT as a cancel of the check (answer "unknown")
    # and the program would never see it: `analyze` went on after a Ctrl-C.
    import os
    import signal
    import threading
    import time

    z3 = load_z3()
    x, y, z = z3.Ints("x y z")
    solver = z3.Solver()
    solver.set("rlimit", 2_000_000)
    solver.add(x * x * x + y * y * y == z * z * z, x > 0, y > 0, z > 0)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # as at a terminal
    timer = threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGINT))
    try:
        start = time.perf_counter()
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            solver.check()
            time.sleep(5)  # the interrupt lands when the check returns, not after this
        assert time.perf_counter() - start < 4
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
