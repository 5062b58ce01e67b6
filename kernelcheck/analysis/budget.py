"""A time budget for the analysis of one kernel: past it, the kernel is not proven.

:func:`within_budget` runs a call and stops it when it runs past ``seconds`` of wall time,
raising :class:`BudgetExceeded` in its place. The caller reports that kernel ``not_proven``
with :func:`budget_reason` (``kernelcheck analyze --kernel-timeout``); nothing is guessed.

How the call is stopped depends on the thread it runs in:

* the main thread of a process (the command itself, the workers of the local process
  pool): ``SIGALRM`` from ``signal.setitimer``; the handler and timer in place before are
  put back afterwards (a timer keeps the time it had left, and fires at once if that time
  is spent);
* any other thread (the task threads of a Dask worker): a timer thread raises the
  exception in the analysing thread (``PyThreadState_SetAsyncExc``).

Either way the exception arrives between two Python bytecodes: a call into native code
finishes first. Code that a raise must not cut in two, such as the Python bindings of Z3
(a raise between making a native object and counting its reference leaves a pointer that
is freed twice later), runs in a :func:`shielded` block: a stop that comes during it waits
for the block to end. Z3 queries, the native calls that can run for seconds, take the time left
(:func:`seconds_left`) as their wall-clock limit, so a budget spent during a proof ends the
proof ("unknown": not proven) instead of waiting for the solver's own limit. It is a
:class:`BaseException`, so the analysis' own ``except Exception`` handlers, which turn a
fault into a ``not_proven`` reason, never take it for a fault. It is raised only while the
budgeted call itself runs (the stack is checked first), never in the set-up or clean-up
around it or after :func:`within_budget` returns; one that lands in a finaliser, where
Python drops it, is raised again :data:`REPEAT` seconds later (and not reported as an
unraisable exception).

State a stopped analysis leaves behind: the per-kernel memo tables of
:mod:`kernelcheck.analysis.summary` and :mod:`kernelcheck.analysis.terms` hold only
completed entries (an entry is stored after its value is computed), and every kernel's
analysis empties them when it starts; :func:`within_budget` also empties them after a
stop, so no term of the stopped kernel is kept, and puts the garbage collector back as it
was before the analysis (:func:`kernelcheck.analysis.collector.recover`).
"""

from __future__ import annotations

import ctypes
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

__all__ = ["BudgetExceeded", "within_budget", "budget_reason", "seconds_left", "shielded"]

T = TypeVar("T")

#: The monotonic time the budget of the analysis running in this thread ends (``deadline``).
_CLOCK = threading.local()


#: Per thread (by identity): ``[depth of shielded blocks, whether a stop waits for them]``.
_SHIELDS: dict[int, list] = {}


@contextmanager
def shielded() -> Iterator[None]:
    """Hold a budget stop back while the block runs; one that came meanwhile is raised when
    the outermost block ends. For code a raise must not cut in two (calls into Z3's
    bindings); such a block must be short, or bounded by the budget itself (a solver query
    takes :func:`seconds_left` as its limit).

    >>> def work():
    ...     with shielded():
    ...         time.sleep(0.1)  # the budget runs out in here
    ...         done.append(True)
    >>> done = []
    >>> try:
    ...     within_budget(work, 0.02)
    ... except BudgetExceeded:
    ...     print("stopped after the block:", done)
    stopped after the block: [True]
    """
    state = _SHIELDS.setdefault(threading.get_ident(), [0, False])
    state[0] += 1
    try:
        yield
    finally:
        state[0] -= 1
        if state[0] == 0 and state[1]:
            state[1] = False
            raise BudgetExceeded


def _held_back(ident: int) -> bool:
    """Whether thread ``ident`` is in a shielded block; if so its stop is left to the block."""
    state = _SHIELDS.get(ident)
    if state is None or state[0] == 0:
        return False
    state[1] = True
    return True


def seconds_left() -> float | None:
    """Seconds left of the budget of the analysis running in this thread (negative once it
    is spent), or ``None`` when none runs under a budget.

    >>> seconds_left() is None
    True
    >>> within_budget(lambda: 0 < seconds_left() <= 5.0, 5.0)
    True
    """
    deadline = getattr(_CLOCK, "deadline", None)
    return None if deadline is None else deadline - time.monotonic()


class BudgetExceeded(BaseException):  # noqa: N818 - the name says what happened
    """The analysis ran past its time budget (not an :class:`Exception`: see the module)."""


def budget_reason(seconds: float) -> str:
    """The ``not_proven`` reason of a kernel whose analysis ran past ``seconds``.

    >>> budget_reason(2.5)
    'analysis budget of 2.5 s exceeded'
    """
    return f"analysis budget of {seconds:g} s exceeded"


def within_budget(call: Callable[[], T], seconds: float | None) -> T:
    """``call()``, stopped with :class:`BudgetExceeded` once it runs past ``seconds``.

    ``seconds`` of ``None`` runs ``call`` with no budget.

    >>> within_budget(lambda: 6 * 7, 5.0)
    42
    >>> try:
    ...     within_budget(lambda: time.sleep(2), 0.05)
    ... except BudgetExceeded:
    ...     print("stopped")
    stopped
    """
    if seconds is None:
        return call()
    if not seconds > 0:
        raise ValueError(f"a time budget must be positive, got {seconds!r}")
    _quiet_unraisable()
    _z3_context_ready()
    outer = getattr(_CLOCK, "deadline", None)
    _CLOCK.deadline = time.monotonic() + seconds
    if outer is not None:
        _CLOCK.deadline = min(_CLOCK.deadline, outer)
    try:
        if threading.current_thread() is threading.main_thread():
            return _with_alarm(call, seconds)
        return _with_thread_timer(call, seconds)
    except BudgetExceeded:
        _forget_kernel_caches()
        from kernelcheck.analysis.collector import recover

        recover()
        raise
    finally:
        _CLOCK.deadline = outer
        state = _SHIELDS.get(threading.get_ident())
        if state is not None and outer is None:
            state[1] = False  # no stop of this budget waits for a later block


#: Seconds between two raises once the budget is spent: a raise that lands in a finaliser
#: (``__del__``) or a garbage-collector callback is dropped by Python, so it is repeated.
REPEAT = 0.2


def _inside(call: Callable[[], T], start: Callable[[], object]) -> T:
    """Starts the clock and runs the budgeted call; the exception is raised only while
    this frame is live (so the clock starts in it: a budget spent at once still lands)."""
    start()
    return call()


def _within_call(frame, call) -> bool:
    """Whether ``frame`` runs inside :func:`_inside` running ``call`` (the budgeted call,
    not its set-up or clean-up, nor code after it, nor the call of the next kernel)."""
    code = _inside.__code__
    while frame is not None:
        if frame.f_code is code and frame.f_locals.get("call") is call:
            return True
        frame = frame.f_back
    return False


def _forget_kernel_caches() -> None:
    from kernelcheck.analysis.summary import forget_kernel_caches

    forget_kernel_caches()


def _with_alarm(call: Callable[[], T], seconds: float) -> T:
    def late(signum, frame) -> None:
        if _within_call(frame, call) and not _held_back(threading.get_ident()):
            raise BudgetExceeded

    started = time.monotonic()
    previous = signal.getsignal(signal.SIGALRM)
    before = signal.getitimer(signal.ITIMER_REAL)
    try:
        signal.signal(signal.SIGALRM, late)
        return _inside(call, lambda: signal.setitimer(signal.ITIMER_REAL, seconds, REPEAT))
    finally:
        # The handler raises nothing here (this frame is not inside the call).
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL if previous is None else previous)
        delay, interval = before
        if delay > 0:  # the timer that was running keeps its time (fires at once if spent)
            left = delay - (time.monotonic() - started)
            signal.setitimer(signal.ITIMER_REAL, max(left, 1e-6), interval)


def _with_thread_timer(call: Callable[[], T], seconds: float) -> T:
    target = threading.get_ident()
    lock = threading.Lock()
    stop = threading.Event()
    armed = [True]

    def raise_in_target() -> bool:
        # Under the lock: the target, if it has left the call meanwhile, waits in
        # disarm() for it, and withdraws what is set here before it goes further.
        if not armed[0] or not _within_call(sys._current_frames().get(target), call):
            return False
        if _held_back(target):
            return True  # the shielded block raises it as it ends
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(target),
                                                   ctypes.py_object(BudgetExceeded))
        return True

    def watch() -> None:
        if stop.wait(seconds):
            return
        while True:
            with lock:
                if not raise_in_target():
                    return
            if stop.wait(REPEAT):
                return

    def disarm() -> None:
        stop.set()
        with lock:
            armed[0] = False
            # One not delivered yet is withdrawn: it never reaches code after the call.
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(target), None)

    watcher = threading.Thread(target=watch, name="kernelcheck-budget", daemon=True)
    # A raise set just before the call returned may land in the first disarm(), before it
    # withdraws it; the second then completes (nothing more is raised once the call has
    # returned), and the caller sees BudgetExceeded.
    try:
        try:
            return _inside(call, watcher.start)
        finally:
            disarm()
    finally:
        disarm()


_hooked = False
_z3_ready = False


def _quiet_unraisable() -> None:
    """Drop a :class:`BudgetExceeded` that lands in a finaliser (it is raised again), the
    ``AttributeError`` of a Z3 object's finaliser (a stop cut its constructor short:
    ``Context.__init__`` stopped between creating the native context and setting
    ``owner``; at worst the native object is not freed), and the ``ArgumentError`` ctypes
    makes of a stop that lands in the argument conversion of a Z3 finaliser's native call
    (the reference is then not released); hand every other unraisable exception to the
    hook in place before."""
    global _hooked
    if _hooked:
        return
    _hooked = True
    previous = sys.unraisablehook

    def hook(unraisable) -> None:
        if not _left_unreported(unraisable):
            previous(unraisable)

    sys.unraisablehook = hook


def _left_unreported(unraisable) -> bool:
    """Whether the hook drops an unraisable exception (see :func:`_quiet_unraisable`)."""
    if unraisable.exc_type is BudgetExceeded:
        return True
    if not str(getattr(unraisable.object, "__module__", "")).startswith("z3"):
        return False
    if unraisable.exc_type is AttributeError:
        return True
    # A stop in a Z3 finaliser's native call, as ctypes reports it: the reference is kept.
    return (unraisable.exc_type is ctypes.ArgumentError
            and "BudgetExceeded" in str(unraisable.exc_value))


def _z3_context_ready() -> None:
    """Z3's global context, made before any clock starts: a stop inside its constructor
    would leave the process without one and print the finaliser's error later."""
    global _z3_ready
    if _z3_ready:
        return
    _z3_ready = True
    try:
        from kernelcheck.analysis.smt import load_z3

        z3 = load_z3()
    except ImportError:  # pragma: no cover - z3-solver is a dependency
        return
    z3.main_ctx()
