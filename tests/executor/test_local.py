"""The local process pool: keyed results, worker deaths, and the corpus run over it."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from kernelcheck.executor import ExecutorError, LocalExecutor, Task, open_executor
from kernelcheck.executor.tasks import TaskResult, deduplicated
from tests.executor import workers

ROOT = Path(__file__).resolve().parents[2]
CORPUS = sorted((ROOT / "fixtures" / "cubin" / "sm_90").glob("*.cubin")) + sorted(
    (ROOT / "fixtures" / "ptx" / "sm_90").glob("*.ptx"))


def _squares(n: int, seconds: float = 0.0) -> list[Task]:
    return [Task(f"sq-{i}", workers.square_slowly, (i, seconds)) for i in range(n)]


@pytest.mark.parametrize("jobs", [1, 2])
def test_every_key_answered_once_with_its_value(jobs):
    with LocalExecutor(jobs) as ex:
        results = list(ex.run(_squares(20)))
    assert sorted(r.key for r in results) == sorted(f"sq-{i}" for i in range(20))
    assert all(r.value == int(r.key[3:]) ** 2 for r in results)


def test_a_repeated_key_is_refused():
    tasks = [Task("same", workers.square_slowly, (1,)), Task("same", workers.square_slowly,
                                                              (2,))]
    with pytest.raises(ExecutorError, match="'same' given twice"):
        list(LocalExecutor(1).run(tasks))


def test_duplicate_results_are_dropped_and_counted():
    counter = [0]
    results = [TaskResult("a", 1), TaskResult("b", 2), TaskResult("a", 99)]
    assert [(r.key, r.value) for r in deduplicated(results, counter)] == [("a", 1), ("b", 2)]
    assert counter == [1]


def test_a_worker_lost_mid_task_reschedules_it_and_loses_nothing(tmp_path):
    marker = str(tmp_path / "died")
    tasks = _squares(12, 0.02)
    tasks.insert(5, Task("victim", workers.die_once, (marker, 7)))
    ex = LocalExecutor(2)
    results = list(ex.run(tasks))
    assert Path(marker).exists(), "the worker was not killed: the test tests nothing"
    assert ex.restarts >= 1
    keys = [r.key for r in results]
    assert sorted(keys) == sorted(t.key for t in tasks) and len(keys) == len(set(keys))
    victim = next(r for r in results if r.key == "victim")
    assert victim.ok and victim.value == 49 and victim.attempts == 2


def test_a_task_that_always_kills_its_worker_is_reported_lost_and_the_rest_finish():
    tasks = _squares(6) + [Task("poison", workers.always_die, (0,))] + _squares(10)[6:]
    results = {r.key: r for r in LocalExecutor(2, retries=1).run(tasks)}
    assert set(results) == {t.key for t in tasks}
    assert not results["poison"].ok and "died 2 times" in results["poison"].lost
    assert all(results[f"sq-{i}"].value == i * i for i in range(10))


def _slow_stream():
    # The poison task kills its worker while the stream is still producing the next task,
    # so that task meets a broken pool; and the poison task is the last of the suspects.
    yield Task("sq-0", workers.square_slowly, (0, 0.3))
    yield Task("poison", workers.always_die, (0,))
    time.sleep(0.5)
    yield from _squares(8)[1:]


def test_the_last_suspect_runs_alone_and_a_task_meeting_a_broken_pool_is_not_lost():
    ex = LocalExecutor(2, retries=1)
    results = {r.key: r for r in ex.run(_slow_stream())}
    assert set(results) == {"poison"} | {f"sq-{i}" for i in range(8)}
    poison = results["poison"]
    assert not poison.ok and poison.attempts == 2 and "died 2 times" in poison.lost
    assert all(results[f"sq-{i}"].value == i * i for i in range(8))
    assert results["sq-1"].attempts == 1, "a task that never ran was counted as tried"
    assert ex.restarts == 2


def test_an_exception_in_a_task_reaches_the_caller():
    tasks = _squares(3) + [Task("bad", workers.fail, (3,))]
    with pytest.raises(ValueError, match="failed by design"):
        list(LocalExecutor(2).run(tasks))


def test_cluster_options_are_checked():
    with pytest.raises(ExecutorError, match="unknown cluster kind 'pbs'"):
        open_executor(cluster="pbs:2")
    with pytest.raises(ExecutorError, match="positive worker count"):
        open_executor(cluster="local:zero")


def test_without_dask_cluster_options_say_what_to_install(monkeypatch, capsys):
    import sys

    from kernelcheck.cli import main

    monkeypatch.setitem(sys.modules, "distributed", None)
    assert main(["analyze", str(CORPUS[0]), "--jsonl", "-", "--cluster", "local:2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "pip install 'kernelcheck[cluster]'" in err[0]


def _records(executor=None, jobs=None):
    from kernelcheck.corpus import run_corpus

    records = []
    summary = run_corpus([str(p) for p in CORPUS], arch="sm_90", jobs=jobs, progress=False,
                         on_record=records.append, executor=executor)
    return summary, sorted(records, key=lambda r: (r.file, r.image, r.kernel or ""))


def test_corpus_over_the_pool_equals_the_corpus_in_process():
    serial_summary, serial = _records(jobs=1)
    pool_summary, pooled = _records(jobs=2)
    assert serial_summary.kernels >= 100 and serial_summary.kernels_failed == 0
    assert pooled == serial
    assert (pool_summary.images, pool_summary.kernels) == (serial_summary.images,
                                                           serial_summary.kernels)


def test_inject_over_two_processes_writes_the_rows_of_the_serial_run(tmp_path, capsys):
    import csv

    from kernelcheck.cli import main

    def rows(stem, *extra):
        assert main(["inject", "saxpy", "--groups", "G_FP32,G_LD", "--trials", "10",
                     "--seed", "3", "--recover", "--out", str(stem), "--no-figure",
                     *extra]) == 0
        with open(stem.with_suffix(".csv")) as handle:
            return [{k: v for k, v in r.items() if not k.startswith("seconds_")}
                    for r in csv.DictReader(handle)]

    serial = rows(tmp_path / "serial")
    pooled = rows(tmp_path / "pooled", "--jobs", "2")
    assert len(serial) == 10 and pooled == serial
