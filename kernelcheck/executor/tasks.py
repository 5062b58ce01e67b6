"""Keyed tasks and their results: what every executor takes and gives back.

A :class:`Task` is a module-level function, its arguments and a **key** unique within one
run. Executors hand back one :class:`TaskResult` per key, in the order tasks finish. The key
is what makes a distributed run exact: a task rescheduled after its worker was lost may, in
the worst case, finish twice (the lost worker's result can arrive late), and
:func:`deduplicated` passes the first result of each key on and drops the others, so no
result is lost or counted twice. A task whose workers keep dying is given up after a few
attempts and reported as **lost** (``TaskResult.lost`` says why); it is never silently
dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from kernelcheck.errors import KernelcheckError

__all__ = ["Task", "TaskResult", "ExecutorError", "ClusterUnavailable", "check_keys",
           "deduplicated", "Progress"]


class ExecutorError(KernelcheckError):
    """An executor could not be set up or used (the message says what and why)."""


class ClusterUnavailable(ExecutorError):
    """Distributed execution was asked for but Dask is not installed or not reachable."""


@dataclass(frozen=True, slots=True)
class Task:
    """One unit of work: ``fn(*args)`` under a key unique within a run.

    ``fn`` must be importable by name (a module-level function), since it is sent to worker
    processes or machines; its arguments must pickle.
    """

    key: str
    fn: Callable[..., Any]
    args: tuple = ()


@dataclass(frozen=True, slots=True)
class TaskResult:
    """The outcome of one task: its value, or why it produced none.

    Attributes
    ----------
    key : str
        The task's key.
    value : object
        What ``fn(*args)`` returned (``None`` when the task was lost).
    lost : str or None
        Set when every worker that ran the task died before it finished, more often than
        the executor allows (the message says how often and the last cause).
    attempts : int
        How many times the task was started, when the executor knows it (1 otherwise).
    """

    key: str
    value: Any = None
    lost: str | None = None
    attempts: int = 1

    @property
    def ok(self) -> bool:
        """``True`` when the task returned a value."""
        return self.lost is None


def check_keys(tasks: Iterable[Task]) -> Iterator[Task]:
    """Pass ``tasks`` through, raising :class:`ExecutorError` on a repeated key.

    Examples
    --------
    >>> [t.key for t in check_keys([Task("a", len, ("x",)), Task("b", len, ("y",))])]
    ['a', 'b']
    """
    seen: set[str] = set()
    for task in tasks:
        if task.key in seen:
            raise ExecutorError(f"task key {task.key!r} given twice in one run: keys must be "
                                f"unique, they are how results are matched to tasks")
        seen.add(task.key)
        yield task


def deduplicated(results: Iterable[TaskResult], counter: list[int] | None = None
                 ) -> Iterator[TaskResult]:
    """The first result of each key; later ones are dropped (and counted in ``counter[0]``).

    Examples
    --------
    >>> rs = [TaskResult("a", 1), TaskResult("a", 1), TaskResult("b", 2)]
    >>> [r.key for r in deduplicated(rs)]
    ['a', 'b']
    """
    seen: set[str] = set()
    for result in results:
        if result.key in seen:
            if counter is not None:
                counter[0] += 1
            continue
        seen.add(result.key)
        yield result


class Progress:
    """A progress bar on stderr (done/total, rate, time left), when enabled (default: when
    stderr is a terminal); see :class:`kernelcheck.output.progress.ProgressBar`."""

    def __init__(self, total: int, unit: str = "tasks", enabled: bool | None = None) -> None:
        from kernelcheck.output.progress import ProgressBar

        self._bar = ProgressBar(total, unit, enabled)
        self.total = total
        self.enabled = self._bar.enabled

    @property
    def done(self) -> int:
        return self._bar.done

    def step(self, extra: str = "") -> None:
        """Count one finished task and redraw the bar."""
        self._bar.step(extra)

    def finish(self) -> None:
        """Remove the bar."""
        self._bar.finish()
