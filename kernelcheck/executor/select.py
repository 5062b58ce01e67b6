"""Choosing an executor from command-line options: the local pool, or a Dask cluster.

``--jobs N`` sizes the local pool (the default, nothing to set up). ``--scheduler
tcp://HOST:PORT`` uses a running Dask scheduler; ``--cluster local:N`` starts a Dask
``LocalCluster`` of N worker processes; ``--cluster slurm[:N]`` starts a
``dask_jobqueue.SLURMCluster`` from the usual ``~/.config/dask/jobqueue.yaml`` (N jobs, or
adaptive). Without Dask installed, the last three fail with one line saying what to install.
"""

from __future__ import annotations

import argparse

from kernelcheck.executor.local import LocalExecutor
from kernelcheck.executor.tasks import ExecutorError

__all__ = ["add_executor_options", "open_executor", "executor_from_args"]


def _workers(text: str) -> int:
    """``--jobs``: a number of worker processes, at least 1."""
    try:
        value = int(text, 10)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive number of workers, got {text!r}")
    return value


def add_executor_options(parser: argparse.ArgumentParser, *, jobs_help: str | None = None,
                         with_jobs: bool = True) -> None:
    """Add ``--cluster`` and ``--scheduler`` (and ``--jobs`` unless ``with_jobs`` is false)."""
    if with_jobs:
        parser.add_argument("--jobs", type=_workers, metavar="N",
                            help=jobs_help or "local worker processes (default: all cores)")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--cluster", metavar="SPEC",
                       help="run on Dask: 'local:N' (a LocalCluster of N worker processes) or "
                            "'slurm[:N]' (dask-jobqueue, N jobs or adaptive; configured by "
                            "~/.config/dask/jobqueue.yaml). Needs kernelcheck[cluster]")
    group.add_argument("--scheduler", metavar="ADDRESS",
                       help="run on a running Dask scheduler, e.g. tcp://HOST:8786. Needs "
                            "kernelcheck[cluster]")


def _count(text: str, spec: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise ExecutorError(f"--cluster {spec}: expected a positive worker count after ':', "
                            f"found {text!r}")
    return n


def open_executor(jobs: int | None = None, cluster: str | None = None,
                  scheduler: str | None = None):
    """The executor the options ask for (the caller closes it).

    Parameters
    ----------
    jobs : int, optional
        Local worker processes (the default executor); ignored with a cluster.
    cluster : str, optional
        ``local:N`` or ``slurm[:N]``.
    scheduler : str, optional
        Address of a running Dask scheduler.

    Returns
    -------
    LocalExecutor or DaskExecutor

    Raises
    ------
    ExecutorError
        A malformed specification, an unreachable scheduler, or Dask missing
        (:class:`~kernelcheck.executor.tasks.ClusterUnavailable`).

    Examples
    --------
    >>> open_executor(jobs=2).describe()
    'local pool, 2 processes'
    """
    if cluster and scheduler:
        raise ExecutorError("give --cluster or --scheduler, not both")
    if scheduler:
        from kernelcheck.executor.dask_cluster import DaskExecutor

        return DaskExecutor.from_scheduler(scheduler)
    if cluster:
        from kernelcheck.executor.dask_cluster import DaskExecutor, require_dask

        kind, _, count = cluster.partition(":")
        if kind == "local":
            require_dask("--cluster local:N")
            return DaskExecutor.from_local_cluster(_count(count, cluster))
        if kind == "slurm":
            require_dask("--cluster slurm")
            return DaskExecutor.from_slurm(_count(count, cluster) if count else None)
        raise ExecutorError(f"--cluster {cluster}: unknown cluster kind {kind!r} (expected "
                            f"'local:N' or 'slurm[:N]'; for a running cluster use "
                            f"--scheduler tcp://HOST:PORT)")
    return LocalExecutor(jobs)


def executor_from_args(args: argparse.Namespace, jobs: int | None = None):
    """:func:`open_executor` from parsed options (``--jobs``, ``--cluster``, ``--scheduler``)."""
    return open_executor(jobs if jobs is not None else getattr(args, "jobs", None),
                         getattr(args, "cluster", None), getattr(args, "scheduler", None))
