"""A fault-injection campaign's trials as keyed tasks, on any executor.

Trials are cut into chunks of consecutive trial numbers; each chunk is one task, keyed by
its first and last trial. A worker builds the :class:`~kernelcheck.faults.campaign.Campaign`
(targets and their golden runs) once per process or thread and keeps it for the chunks it
gets next. Because every trial draws from its own seed (``default_rng([seed, trial])``), the
rows do not depend on the chunk size, the executor or the number of workers; they are
returned sorted by trial, as :meth:`Campaign.run` returns them. The timing columns
(``seconds_launch``, ``seconds_overhead``) are measurements and naturally differ from run
to run.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

from kernelcheck.errors import KernelcheckError
from kernelcheck.executor.tasks import Progress, Task

__all__ = ["campaign_tasks", "run_trials", "run_campaign"]

_local = threading.local()


def _campaign(specs: tuple, path: Path | None, config):
    from kernelcheck.faults.campaign import Campaign

    memo = getattr(_local, "campaigns", None)
    if memo is None:
        memo = _local.campaigns = {}
    key = (specs, str(path) if path else None, repr(config))
    if key not in memo:
        memo.clear()  # one campaign per worker at a time: golden runs hold memory
        memo[key] = Campaign(specs, config=config, path=path)
    return memo[key]


def run_trials(specs: tuple, path: Path | None, config, start: int, count: int, seed: int,
               model: str, groups: tuple, recover: bool) -> tuple:
    """Trials ``start .. start + count - 1`` of a campaign (the body of one task)."""
    campaign = _campaign(specs, path, config)
    return campaign.run(count, seed, model, list(groups), recover=recover, start=start)


def campaign_tasks(specs: Sequence[tuple[str, int, bool]], trials: int, seed: int, model: str,
                   groups: Sequence[str], *, recover: bool = False, path: Path | None = None,
                   config=None, chunk: int = 8) -> list[Task]:
    """The tasks of a campaign of ``trials`` trials, ``chunk`` trials each.

    Examples
    --------
    >>> [t.key for t in campaign_tasks([("vec_add", 0, False)], 5, 0, "single", ["G_GP"],
    ...                                chunk=2)]
    ['trials-0-1', 'trials-2-3', 'trials-4-4']
    """
    if chunk < 1:
        raise KernelcheckError(f"chunk must be at least 1, got {chunk}")
    specs = tuple(tuple(s) for s in specs)
    return [Task(f"trials-{start}-{min(start + chunk, trials) - 1}", run_trials,
                 (specs, path, config, start, min(chunk, trials - start), seed, model,
                  tuple(groups), recover))
            for start in range(0, trials, chunk)]


def run_campaign(executor, specs: Sequence[tuple[str, int, bool]], trials: int, seed: int,
                 model: str, groups: Sequence[str], *, recover: bool = False,
                 path: Path | None = None, config=None, chunk: int | None = None,
                 progress: bool | None = None, sink: list | None = None) -> tuple:
    """Run a campaign on ``executor``; the trial rows sorted by trial.

    Parameters
    ----------
    executor : LocalExecutor or DaskExecutor
        Where the chunks run.
    specs, trials, seed, model, groups, recover, path, config
        As for :class:`~kernelcheck.faults.campaign.Campaign` and its ``run``.
    chunk : int, optional
        Trials per task; default about four tasks per worker, at most 64 trials.
    progress : bool, optional
        Progress on stderr (default: when stderr is a terminal).
    sink : list, optional
        Receives the rows as chunks finish, so a caller stopped by Ctrl-C keeps them.

    Raises
    ------
    KernelcheckError
        A chunk was lost (its workers kept dying): the campaign would be incomplete.
    """
    if chunk is None:
        chunk = max(1, min(64, -(-trials // max(1, 4 * max(1, executor.workers)))))
    tasks = campaign_tasks(specs, trials, seed, model, groups, recover=recover, path=path,
                           config=config, chunk=chunk)
    meter = Progress(len(tasks), "chunks of trials", **({} if progress is None
                                                         else {"enabled": progress}))
    rows = sink if sink is not None else []
    try:
        for result in executor.run(tasks):
            if not result.ok:
                raise KernelcheckError(f"campaign chunk {result.key} was lost: {result.lost}")
            rows.extend(result.value)
            meter.step()
    finally:
        meter.finish()
    return tuple(sorted(rows, key=lambda r: r.trial))
