"""The embedded default executor: a process pool on this machine, no setup needed.

``jobs == 1`` runs every task in the calling process, in order. Otherwise tasks go to a
:class:`concurrent.futures.ProcessPoolExecutor` with at most ``2 * jobs`` in flight, so a
stream of large tasks (images of a whole library) never sits in memory at once.

A worker process that dies (a crash in native code, the out-of-memory killer) breaks the
whole pool, and Python cannot say which task killed it. Every task then in flight becomes a
*suspect*: the pool is restarted and suspects are run again **one at a time**, nothing
beside them, so a second death names its task exactly. A task that kills its worker while
running alone more than ``retries`` times is reported lost (:attr:`TaskResult.lost`); the
others finish normally. This is the rule Dask applies
(``distributed.scheduler.allowed-failures``), made exact for a pool that cannot tell its
workers apart. A task whose submission meets a pool that has just broken never ran: it
waits for the next pool and is not counted as tried.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool

from kernelcheck.executor.tasks import Task, TaskResult, check_keys, deduplicated

__all__ = ["LocalExecutor", "DEFAULT_RETRIES"]

#: Times a task may kill its worker (running alone) before it is reported lost; Dask's
#: default ``allowed-failures`` is the same.
DEFAULT_RETRIES = 3


class LocalExecutor:
    """Run keyed tasks over local worker processes.

    Parameters
    ----------
    jobs : int, optional
        Worker processes; default every core. ``1`` runs tasks in this process.
    retries : int
        Deaths of a task's worker (the task running alone) tolerated before it is lost.

    Examples
    --------
    >>> from kernelcheck.executor.tasks import Task
    >>> with LocalExecutor(jobs=1) as ex:
    ...     sorted(r.value for r in ex.run([Task("a", len, ("ab",)), Task("b", len, ("c",))]))
    [1, 2]
    """

    kind = "local"

    def __init__(self, jobs: int | None = None, retries: int = DEFAULT_RETRIES) -> None:
        self.jobs = max(1, jobs or os.cpu_count() or 1)
        self.retries = retries
        #: Results dropped because their key had already been answered (see deduplicated).
        self.duplicates = [0]
        #: Pool restarts after a worker died.
        self.restarts = 0

    @property
    def workers(self) -> int:
        """Worker slots (processes)."""
        return self.jobs

    def describe(self) -> str:
        """A short description for messages (``local pool, 4 processes``)."""
        if self.jobs == 1:
            return "this process"
        return f"local pool, {self.jobs} processes"

    def __enter__(self) -> LocalExecutor:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Nothing to release: each :meth:`run` owns its pool."""

    def run(self, tasks: Iterable[Task]) -> Iterator[TaskResult]:
        """Results of ``tasks`` as they finish (one per key; see the module notes).

        An exception raised by a task's function is raised here, after the pool is shut
        down; it is a fault of the function, not of the worker.
        """
        tasks = check_keys(tasks)
        if self.jobs == 1:
            return deduplicated((TaskResult(t.key, t.fn(*t.args)) for t in tasks),
                                self.duplicates)
        return deduplicated(self._pool(tasks), self.duplicates)

    def _pool(self, tasks: Iterator[Task]) -> Iterator[TaskResult]:
        suspects: deque[Task] = deque()
        # Tasks taken from ``tasks`` whose submission met a pool that had just broken: they
        # never ran, so they are neither suspects nor counted as tried.
        untried: deque[Task] = deque()
        attempts: dict[str, int] = {}
        exhausted = False
        while True:
            pool = ProcessPoolExecutor(max_workers=self.jobs, initializer=_ignore_sigint)
            in_flight: dict = {}
            broken = False
            # True while a suspect runs: nothing is submitted beside it, so a death names it.
            solo = False
            try:
                while True:
                    solo = solo and bool(in_flight)
                    if not in_flight and suspects:
                        task = suspects.popleft()
                        solo = _submit(pool, task, in_flight, attempts)
                        if not solo:
                            suspects.appendleft(task)
                            broken = True
                            break
                    # Other tasks fill up to 2 * jobs in flight.
                    while not (solo or suspects or exhausted) and len(in_flight) < 2 * self.jobs:
                        task = untried.popleft() if untried else next(tasks, None)
                        if task is None:
                            exhausted = True
                            break
                        if not _submit(pool, task, in_flight, attempts):
                            untried.appendleft(task)
                            broken = True
                            break
                    if broken:
                        break
                    if not in_flight:
                        return
                    done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                    for future in done:
                        task = in_flight[future]
                        try:
                            value = future.result()
                        except BrokenProcessPool:
                            broken = True
                            continue
                        del in_flight[future]
                        yield TaskResult(task.key, value, attempts=attempts.pop(task.key))
                    if broken:
                        break
            except KeyboardInterrupt:
                # Ctrl-C reaches the whole process group; the workers ignore it and are
                # stopped here, so the caller can write what has finished, at once.
                _terminate_workers(pool)
                broken = True
                raise
            finally:
                pool.shutdown(wait=not broken, cancel_futures=True)
            self.restarts += 1
            alone = len(in_flight) == 1
            for task in in_flight.values():
                if alone and attempts[task.key] > self.retries:
                    n = attempts.pop(task.key)
                    yield TaskResult(task.key, None, attempts=n, lost=(
                        f"the worker process running this task died {n} times (the task "
                        f"running alone each time after the first): given up"))
                elif alone:
                    suspects.appendleft(task)
                else:
                    suspects.append(task)


def _submit(pool: ProcessPoolExecutor, task: Task, in_flight: dict,
            attempts: dict[str, int]) -> bool:
    """Submit ``task``; False (and nothing counted) when the pool has broken meanwhile."""
    try:
        in_flight[pool.submit(task.fn, *task.args)] = task
    except BrokenProcessPool:
        return False
    attempts[task.key] = attempts.get(task.key, 0) + 1
    return True


def _ignore_sigint() -> None:
    """Worker initializer: Ctrl-C is the parent's to handle (it stops the workers)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _terminate_workers(pool: ProcessPoolExecutor) -> None:
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        try:
            process.terminate()
        except (OSError, ValueError, AttributeError):
            pass
