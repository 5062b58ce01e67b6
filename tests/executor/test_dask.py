"""The same work on a Dask LocalCluster of two worker processes: equal results, and no
result lost or doubled when a worker dies mid-task."""

from __future__ import annotations

import dataclasses

import pytest

pytest.importorskip("distributed")

from kernelcheck.executor import LocalExecutor, Task  # noqa: E402
from kernelcheck.executor.campaign import run_campaign  # noqa: E402
from kernelcheck.executor.dask_cluster import DaskExecutor  # noqa: E402
from tests.executor import workers  # noqa: E402
from tests.executor.test_local import _records  # noqa: E402

SPECS = [("vec_add", 0, False), ("saxpy", 0, False), ("inplace_add_one", 0, False),
         ("atomic_add_all", 0, False), ("vec_add", 0, True)]


@pytest.fixture(scope="module")
def dask_executor():
    import dask

    # One retry is enough for the tests and keeps the hopeless case fast.
    with dask.config.set({"distributed.scheduler.allowed-failures": 1}):
        executor = DaskExecutor.from_local_cluster(2)
        yield executor
        executor.close()


def test_the_fixture_corpus_on_dask_equals_the_local_pool(dask_executor):
    local_summary, local = _records(jobs=2)
    dask_summary, distributed = _records(executor=dask_executor)
    assert local_summary.kernels >= 100
    assert distributed == local
    assert (dask_summary.images, dask_summary.kernels, dask_summary.kernels_failed) == (
        local_summary.images, local_summary.kernels, local_summary.kernels_failed)


def _without_timing(rows):
    return [dataclasses.replace(r, seconds_launch=0.0, seconds_overhead=0.0) for r in rows]


def test_a_campaign_on_dask_equals_the_campaign_in_process(dask_executor):
    from kernelcheck.faults.campaign import Campaign

    args = (24, 11, "single", ["G_FP32", "G_LD", "G_GP"])
    serial = Campaign(SPECS).run(*args, recover=True)
    local = run_campaign(LocalExecutor(1), SPECS, *args, recover=True, chunk=5)
    distributed = run_campaign(dask_executor, SPECS, *args, recover=True, chunk=3)
    assert len(serial) >= 20 and {r.kernel for r in serial} >= {"vec_add", "saxpy"}
    assert _without_timing(distributed) == _without_timing(serial) == _without_timing(local)


def test_a_worker_killed_mid_task_loses_and_doubles_nothing(dask_executor, tmp_path):
    marker = tmp_path / "died"
    tasks = [Task(f"sq-{i}", workers.square_slowly, (i, 0.05)) for i in range(16)]
    tasks.insert(3, Task("victim", workers.die_once, (str(marker), 9, 0.2)))
    results = list(dask_executor.run(tasks))
    assert marker.exists(), "no worker was killed: the test tests nothing"
    keys = [r.key for r in results]
    assert sorted(keys) == sorted(t.key for t in tasks) and len(set(keys)) == len(keys)
    values = {r.key: r.value for r in results}
    assert values["victim"] == 81 and all(values[f"sq-{i}"] == i * i for i in range(16))


def test_a_task_that_keeps_killing_workers_is_reported_lost(dask_executor):
    results = list(dask_executor.run([Task("poison", workers.always_die, (0,))]))
    assert [r.key for r in results] == ["poison"]
    assert not results[0].ok and "died" in results[0].lost
    # The cluster has replaced its workers and takes the next run.
    again = list(dask_executor.run([Task("fine", workers.square_slowly, (4,))]))
    assert [(r.key, r.value) for r in again] == [("fine", 16)]
