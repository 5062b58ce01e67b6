"""Keyed tasks on Dask distributed: a running scheduler, a LocalCluster, or SLURM.

Dask is an optional dependency (``pip install 'kernelcheck[cluster]'``), imported only
here and only when a cluster is asked for. Each task becomes one Dask future whose key is
the task's key behind a per-run prefix (``kc-<8 hex>-<key>``), so two runs sharing a
long-lived cluster never meet, and a key submitted twice is one future.

What Dask gives and what is added here:

* a worker lost mid-task (crash, node failure, pre-emption of a SLURM job) makes the
  scheduler run the task again elsewhere; after ``distributed.scheduler.allowed-failures``
  (3) such losses it gives up with ``KilledWorker``, reported as a lost result, never as a
  silent gap (Dask counts a loss against every task then running on the dead worker, so a
  task sharing workers with a crashing one can be given up too; it is reported the same
  way);
* results stream back with ``as_completed``, at most ``window`` futures in flight, and are
  released as soon as they are read, so a corpus far larger than memory flows through;
* results are de-duplicated by key (:func:`~kernelcheck.executor.tasks.deduplicated`).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator
from typing import Any

from kernelcheck.executor.tasks import (
    ClusterUnavailable,
    ExecutorError,
    Task,
    TaskResult,
    check_keys,
    deduplicated,
)

__all__ = ["DaskExecutor", "INSTALL_HINT", "require_dask"]

INSTALL_HINT = "pip install 'kernelcheck[cluster]' (dask[distributed] and dask-jobqueue)"

#: Jobs a bare ``--cluster slurm`` scales between (adaptively).
SLURM_DEFAULT_MAX_JOBS = 8


def require_dask(option: str = "--cluster") -> Any:
    """Import :mod:`distributed`, or raise :class:`ClusterUnavailable` saying what to install."""
    try:
        import distributed
    except ImportError as error:
        raise ClusterUnavailable(f"{option} needs Dask distributed, which is not installed: "
                                 f"{INSTALL_HINT}") from error
    return distributed


class DaskExecutor:
    """Run keyed tasks on a Dask distributed cluster.

    Use the named constructors: :meth:`from_scheduler`, :meth:`from_local_cluster`,
    :meth:`from_slurm`. The executor closes the client (and the cluster, when it made one)
    on :meth:`close`.

    Parameters
    ----------
    client : distributed.Client
        A connected client.
    cluster : object, optional
        The cluster the executor created and owns (closed with it).
    window : int, optional
        Futures in flight at most; default four per worker thread, at least 64.
    """

    kind = "dask"

    def __init__(self, client: Any, cluster: Any = None, window: int | None = None,
                 label: str = "dask") -> None:
        self.client = client
        self.cluster = cluster
        self.window = window
        self.label = label
        #: Results dropped because their key had already been answered.
        self.duplicates = [0]

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_scheduler(cls, address: str, **kwargs) -> DaskExecutor:
        """Connect to a running scheduler (``tcp://HOST:PORT``)."""
        distributed = require_dask("--scheduler")
        try:
            client = distributed.Client(address, timeout=30)
        except (OSError, TimeoutError) as error:
            raise ExecutorError(f"--scheduler {address}: cannot connect: {error}") from error
        return cls(client, label=f"dask scheduler {address}", **kwargs)

    @classmethod
    def from_local_cluster(cls, workers: int, *, processes: bool = True,
                           threads_per_worker: int = 1, **kwargs) -> DaskExecutor:
        """Start a Dask ``LocalCluster`` of ``workers`` workers on this machine.

        Worker processes (the default) suit the analysis, which holds the GIL.
        """
        distributed = require_dask("--cluster local:N")
        cluster = distributed.LocalCluster(n_workers=workers, processes=processes,
                                           threads_per_worker=threads_per_worker,
                                           dashboard_address=None)
        client = distributed.Client(cluster)
        return cls(client, cluster, label=f"dask LocalCluster, {workers} workers", **kwargs)

    @classmethod
    def from_slurm(cls, jobs: int | None = None, **kwargs) -> DaskExecutor:
        """A ``dask_jobqueue.SLURMCluster`` configured by the usual jobqueue.yaml.

        ``jobs`` SLURM jobs are requested; without it the cluster scales adaptively
        between 1 and :data:`SLURM_DEFAULT_MAX_JOBS` jobs.
        """
        require_dask("--cluster slurm")
        try:
            from dask_jobqueue import SLURMCluster
        except ImportError as error:
            raise ClusterUnavailable(f"--cluster slurm needs dask-jobqueue, which is not "
                                     f"installed: {INSTALL_HINT}") from error
        import distributed

        try:
            cluster = SLURMCluster()
        except (ValueError, KeyError, OSError) as error:
            raise ExecutorError(f"--cluster slurm: cannot configure a SLURMCluster ({error});"
                                f" set cores, memory and queue in "
                                f"~/.config/dask/jobqueue.yaml (see docs/scale-out.md)"
                                ) from error
        if jobs:
            cluster.scale(jobs=jobs)
        else:
            cluster.adapt(minimum_jobs=1, maximum_jobs=SLURM_DEFAULT_MAX_JOBS)
        client = distributed.Client(cluster)
        return cls(client, cluster, label="dask SLURMCluster", **kwargs)

    # ------------------------------------------------------------------ use
    @property
    def workers(self) -> int:
        """Worker threads now connected (0 while an adaptive cluster is still starting)."""
        info = self.client.scheduler_info()
        return sum(w.get("nthreads", 1) for w in info.get("workers", {}).values())

    def describe(self) -> str:
        """A short description for messages."""
        return self.label

    def __enter__(self) -> DaskExecutor:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Close the client, and the cluster if this executor started it."""
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()

    def run(self, tasks: Iterable[Task]) -> Iterator[TaskResult]:
        """Results of ``tasks`` as they finish (one per key; lost ones say why).

        An exception raised by a task's function is raised here.
        """
        return deduplicated(self._stream(check_keys(tasks)), self.duplicates)

    def _stream(self, tasks: Iterator[Task]) -> Iterator[TaskResult]:
        from distributed import as_completed

        try:
            from distributed import KilledWorker
        except ImportError:  # older releases keep it in the scheduler module
            from distributed.scheduler import KilledWorker

        prefix = f"kc-{uuid.uuid4().hex[:8]}-"
        window = self.window or max(64, 4 * self.workers)
        keys: dict[str, str] = {}
        stream = as_completed()
        in_flight = 0

        def submit() -> bool:
            task = next(tasks, None)
            if task is None:
                return False
            key = prefix + task.key
            keys[key] = task.key
            stream.add(self.client.submit(task.fn, *task.args, key=key, pure=False))
            return True

        while in_flight < window and submit():
            in_flight += 1
        try:
            for future in stream:
                in_flight -= 1
                key = keys[future.key]
                try:
                    value = future.result()
                except KilledWorker as error:
                    yield TaskResult(key, None, lost=f"Dask gave the task up after its "
                                                     f"workers died: {error}")
                else:
                    yield TaskResult(key, value)
                finally:
                    future.release()
                if submit():
                    in_flight += 1
        finally:
            for future in list(getattr(stream, "futures", ())):
                future.cancel()
