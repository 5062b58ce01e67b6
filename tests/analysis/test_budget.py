"""The per-kernel time budget (:mod:`kernelcheck.analysis.budget`): the call is stopped in
the main thread and in others, what was in place before is put back, nothing is raised
after the call, and no memo table keeps the stopped kernel's terms."""

from __future__ import annotations

import signal
import threading
import time

import pytest

import kernelcheck.analysis.summary as summary_module
import kernelcheck.analysis.terms as terms
from kernelcheck.analysis.budget import BudgetExceeded, budget_reason, within_budget


def _spin(seconds: float = 30.0) -> str:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass
    return "finished"


def _outcome(call, seconds) -> str:
    try:
        return within_budget(call, seconds)
    except BudgetExceeded:
        return "stopped"


def test_reason_words():
    assert budget_reason(10) == "analysis budget of 10 s exceeded"
    assert budget_reason(0.25) == "analysis budget of 0.25 s exceeded"


def test_the_handler_and_timer_in_place_before_are_put_back():
    fired = []
    previous = signal.signal(signal.SIGALRM, lambda *_: fired.append(1))
    try:
        signal.setitimer(signal.ITIMER_REAL, 30)
        assert _outcome(_spin, 0.05) == "stopped"
        assert _outcome(lambda: "quick", 5) == "quick"
        assert signal.getsignal(signal.SIGALRM) is not previous
        assert signal.getsignal(signal.SIGALRM).__name__ == "<lambda>"
        assert 25 < signal.getitimer(signal.ITIMER_REAL)[0] <= 30
        # A timer whose time runs out during the budgeted call still fires, afterwards.
        signal.setitimer(signal.ITIMER_REAL, 0.05)
        assert _outcome(lambda: _spin(0.2), 5) == "finished"
        deadline = time.monotonic() + 5
        while not fired and time.monotonic() < deadline:
            time.sleep(0.01)
        assert fired
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("where", ["main thread", "other thread"])
def test_stopped_at_once_then_the_next_call_runs_whole(where):
    outcomes = []

    def calls():
        outcomes.append(_outcome(_spin, 1e-6))
        outcomes.append(_outcome(lambda: _spin(0.3), 10))
        outcomes.append(_outcome(_spin, 0.1))

    if where == "main thread":
        calls()
    else:
        worker = threading.Thread(target=calls)
        worker.start()
        worker.join(60)
        assert not worker.is_alive()
    assert outcomes == ["stopped", "finished", "stopped"]
    time.sleep(0.5)  # nothing raised after the calls, and no watcher left behind
    assert not [t for t in threading.enumerate() if t.name == "kernelcheck-budget"]


class _Finalised:
    """Its finaliser runs until the budget's exception reaches it (Python drops it there)."""

    caught: list[str] = []

    def __del__(self) -> None:
        try:
            _spin(20)
        except BudgetExceeded:
            self.caught.append("in __del__")
            raise


def test_a_stop_that_lands_in_a_finaliser_is_raised_again(capfd):
    """Python drops an exception raised in ``__del__``; the budget raises it again, and
    prints nothing about the dropped one."""

    def churn():
        _Finalised()  # dropped at once: its finaliser runs here
        while True:
            _spin(0.001)

    started = time.monotonic()
    assert _outcome(churn, 0.05) == "stopped"
    assert _Finalised.caught == ["in __del__"]
    assert time.monotonic() - started < 10
    assert "Exception ignored" not in capfd.readouterr().err


def test_a_z3_object_a_stop_left_half_built_prints_nothing(capfd):
    """A stop inside a Z3 constructor (``Context.__init__`` between making the native
    context and setting ``owner``) leaves an object whose finaliser fails: nothing about it
    reaches stderr, and the global context exists before any clock starts."""
    import gc

    import z3

    assert within_budget(lambda: 1, 5.0) == 1
    assert z3.z3._main_ctx is not None
    half_built = z3.Context.__new__(z3.Context)
    del half_built
    gc.collect()
    assert "Exception ignored" not in capfd.readouterr().err


def test_a_stop_leaves_no_memo_table_filled():
    x = terms.Param("x", 0, 8)

    def fill_then_spin():
        assert terms.Add((x, terms.Const(1))) == terms.Add((x, terms.Const(1)))  # remembered
        summary_module._base(x)
        assert terms._EQUAL and summary_module._base.cache_info().currsize
        _spin()

    assert _outcome(fill_then_spin, 0.1) == "stopped"
    assert not terms._EQUAL
    assert summary_module._base.cache_info().currsize == 0


def test_no_budget_and_bad_budgets():
    assert within_budget(lambda: 7, None) == 7
    for bad in (0, -1.0, float("nan")):
        with pytest.raises(ValueError):
            within_budget(lambda: 7, bad)


def _hard_query():
    """A non-linear query Z3 does not settle within seconds (a cube sum in integers)."""
    from kernelcheck.analysis.smt import load_z3

    z3 = load_z3()
    x, y, z = z3.Ints("x y z")
    solver = z3.Solver()
    solver.add(x > 1, y > 1, z > 1, x * x * x + y * y * y == z * z * z + 7, x + y > 1000)
    return solver


@pytest.mark.parametrize("where", ["main", "thread"])
def test_a_proof_ends_with_the_budget_not_at_its_own_limit(where):
    from kernelcheck.analysis.budget import seconds_left
    from kernelcheck.analysis.smt import check

    answers = []

    def prove():
        assert 0 < seconds_left() <= 0.3
        check(_hard_query(), 60_000)  # its own limit: a minute
        return _spin()

    def run():
        started = time.monotonic()
        answers.append(_outcome(prove, 0.3))
        answers.append(time.monotonic() - started)

    if where == "main":
        run()
    else:
        worker = threading.Thread(target=run)
        worker.start()
        worker.join()
    assert answers[0] == "stopped"
    assert answers[1] < 3.0
    assert seconds_left() is None


def _in_thread(call):
    results = []
    worker = threading.Thread(target=lambda: results.append(call()))
    worker.start()
    worker.join(60)
    assert not worker.is_alive()
    return results[0]


@pytest.mark.parametrize("where", ["main", "thread"])
def test_a_stop_waits_for_the_shielded_block_and_comes_right_after(where):
    from kernelcheck.analysis.budget import shielded

    def run():
        done = []

        def work():
            with shielded():
                _spin(0.3)  # the budget runs out in here
                done.append("block")
            done.append("after the block")  # never reached
            return _spin()

        started = time.monotonic()
        outcome = _outcome(work, 0.05)
        return outcome, done, time.monotonic() - started

    outcome, done, took = run() if where == "main" else _in_thread(run)
    assert outcome == "stopped" and done == ["block"]
    assert 0.3 <= took < 1.0
    # Nothing waits into the next budget: a call that ends in time is not stopped.

    def quick():
        with shielded():
            return "finished"

    assert (_outcome(quick, 5.0) if where == "main"
            else _in_thread(lambda: _outcome(quick, 5.0))) == "finished"


@pytest.mark.parametrize("where", ["main", "thread"])
def test_stops_never_cut_the_z3_bindings_of_a_proof(where, capfd):
    """Hundreds of stops landing while queries are built and checked: each is a clean
    BudgetExceeded (a stop inside the bindings used to surface as ctypes' ArgumentError,
    or as Z3's own assertion message on stderr)."""
    from kernelcheck.analysis.smt import prove_same_address
    from kernelcheck.analysis.terms import Param, Special, add, mul

    i = Special("%tid.x")
    long_sum = i
    for k in range(40):  # a query whose encoding makes many calls into the bindings
        long_sum = add(long_sum, mul(Param(f"p{k}", 4 * k, 4), i))

    def proofs():
        while True:
            prove_same_address(long_sum, add(long_sum, i))

    def run():
        outcomes = []
        for k in range(120):
            try:
                outcomes.append(_outcome(proofs, 0.002 + (k % 5) * 0.001))
            except Exception as error:  # noqa: BLE001 - what this test looks for
                outcomes.append(type(error).__name__)
        return outcomes

    outcomes = run() if where == "main" else _in_thread(run)
    assert set(outcomes) == {"stopped"}
    assert "ASSERTION VIOLATION" not in capfd.readouterr().err


def test_a_stop_in_a_z3_finalisers_native_call_is_not_reported():
    """ctypes turns a stop that lands while a Z3 finaliser converts its arguments into an
    ArgumentError, which Python reports as unraisable; the budget's hook drops that report,
    and hands on the others."""
    import ctypes
    from types import SimpleNamespace

    from kernelcheck.analysis.budget import _left_unreported

    def report(kind, message, module="z3.z3"):
        owner = type("AstRef", (), {"__module__": module})()
        return SimpleNamespace(exc_type=kind, exc_value=kind(message), object=owner)

    assert _left_unreported(report(ctypes.ArgumentError, "argument 2: BudgetExceeded: "))
    assert _left_unreported(report(BudgetExceeded, "", module="anywhere"))
    assert not _left_unreported(report(ctypes.ArgumentError, "argument 2: TypeError: x"))
    assert not _left_unreported(report(ctypes.ArgumentError, "BudgetExceeded",
                                       module="numpy"))
