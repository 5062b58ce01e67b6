"""Where embarrassingly parallel work runs: a local process pool, or Dask distributed.

One abstraction for every library-scale job kernelcheck has (analysing the images of whole
libraries, building analysis bundles, fault-injection campaigns): a stream of keyed
:class:`Task` values goes in, one :class:`TaskResult` per key comes out as tasks finish.
:class:`LocalExecutor` is the default and needs nothing; :class:`DaskExecutor` runs the same
tasks on a Dask cluster (optional dependency, imported only when used). Results do not
depend on the executor or the number of workers: tasks carry everything they need (a
campaign's trials are seeded per trial), and results are matched to tasks by key.
"""

from kernelcheck.executor.local import LocalExecutor
from kernelcheck.executor.select import add_executor_options, executor_from_args, open_executor
from kernelcheck.executor.tasks import (
    ClusterUnavailable,
    ExecutorError,
    Progress,
    Task,
    TaskResult,
)

__all__ = ["Task", "TaskResult", "LocalExecutor", "ExecutorError", "ClusterUnavailable",
           "Progress", "open_executor", "add_executor_options", "executor_from_args",
           "DaskExecutor"]


def __getattr__(name: str):
    # DaskExecutor is loaded lazily so that importing kernelcheck.executor never imports Dask.
    if name == "DaskExecutor":
        from kernelcheck.executor.dask_cluster import DaskExecutor

        return DaskExecutor
    raise AttributeError(name)
