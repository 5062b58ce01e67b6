"""The shim under stress and failure: many threads, a dead helper, injected internal
faults, a corrupted or foreign cache, and a cache that is not private."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys

import pytest

from kernelcheck.cache import AnalysisCache, CachePermissionError
from tests.shim.conftest import CLIENTS, FIXTURES, fixture_launches, run_client

ELEMENTWISE = FIXTURES / "ptx" / "sm_90" / "elementwise.ptx"


def _kc_run(env, *args, log=None, report=None):
    command = [sys.executable, "-m", "kernelcheck.cli", "run"]
    if log:
        command += ["--log", str(log)]
    if report:
        command += ["--report", str(report)]
    return subprocess.run([*command, "--", *args], env=env, capture_output=True, text=True,
                          timeout=600)


def _warm(env, path=ELEMENTWISE):
    done = subprocess.run([sys.executable, "-m", "kernelcheck.cli", "analyze", "--warm-cache",
                           str(path)], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_eight_threads_launching_at_once_get_exact_counts(env, tmp_path):
    _warm(env)
    env = dict(env, KERNELCHECK_STANDIN_NOOP="1")
    report = tmp_path / "report.json"
    done = _kc_run(env, sys.executable, str(CLIENTS / "threaded_client.py"), str(ELEMENTWISE),
                   "vec_add", "8", "10000", report=report)
    assert done.returncode == 0, done.stderr
    data = json.loads(report.read_text())
    (kernel,) = data["kernels"]
    assert kernel["name"] == "vec_add"
    assert kernel["instances"] == 80_000
    # out = buf, a = buf + 4096, b = buf + 8192, 256 floats each: disjoint
    assert kernel["idempotent"] == 80_000


def test_killing_the_helper_mid_run_does_not_disturb_the_program(env, tmp_path):
    other = tmp_path / "other.ptx"
    other.write_text(ELEMENTWISE.read_text() + "\n// another image\n")
    report = tmp_path / "report.json"
    done = _kc_run(env, sys.executable, str(CLIENTS / "kill_helper_client.py"),
                   str(ELEMENTWISE), str(other), report=report)
    assert done.returncode == 0, done.stderr
    assert "survived" in done.stdout
    data = json.loads(report.read_text())
    assert data["instances"] == 2


def _shim_env_with_warm_cache(env, tmp_path, path=ELEMENTWISE):
    """Warm the cache and build the shim's environment in this process.

    Both use this process's analyzer version (computed once from the analysis sources and
    cached), so the shim finds the rows just written even if those sources are edited
    meanwhile; a ``kernelcheck analyze --warm-cache`` child and a ``kernelcheck run``
    child would each hash the sources again, and an edit in between made every lookup
    miss (every instance no_analysis, no warning).
    """
    from kernelcheck.cache.warm import warm_cache
    from kernelcheck.shim.build import preload_library
    from kernelcheck.shim.launcher import shim_environment

    cache_dir = env["KERNELCHECK_CACHE_DIR"]
    cache = AnalysisCache(cache_dir)
    try:
        warm_cache(path, cache=cache)
    finally:
        cache.close()
    reports = tmp_path / "reports"
    reports.mkdir()
    return shim_environment(env, preload_library(), cache_dir, reports)


@pytest.mark.parametrize("fault", ["cache", "spool", "oom", "eval"])
def test_internal_failures_degrade_to_not_proven(env, tmp_path, fault):
    spec = fixture_launches(["elementwise.ptx"])[:6]
    plain, plain_out = run_client(spec, tmp_path, env, name="plain")
    log = tmp_path / "log.jsonl"
    faulty = dict(_shim_env_with_warm_cache(env, tmp_path), KERNELCHECK_SHIM_FAULT=fault,
                  KERNELCHECK_LOG=str(log))
    done, out = run_client(spec, tmp_path, faulty, name="faulty")  # no helper
    assert done.returncode == 0, done.stderr
    assert out == plain_out
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(lines) == len(spec)
    verdicts = [line["verdict"] for line in lines]
    rules = {line["rule"] for line in lines}
    if fault in ("cache", "oom", "eval"):
        assert set(verdicts) == {"not_proven"}
        assert done.stderr.count("kernelcheck: warning") >= 1
        if fault == "eval":  # the analysis was found and its evaluation failed
            assert rules == {"internal"}
    else:  # a failed hand-over only matters for images not yet analysed
        assert "not_proven" not in verdicts


def test_corrupted_cache_file_is_rebuilt(env, tmp_path):
    cache_dir = env["KERNELCHECK_CACHE_DIR"]
    db = os.path.join(cache_dir, "analysis.sqlite3")
    with open(db, "wb") as handle:
        handle.write(b"this is not a database" * 100)
    os.chmod(db, 0o600)
    spec = fixture_launches(["elementwise.ptx"])[:2]
    done, out = run_client(spec, tmp_path, env, under_shim=True)
    assert done.returncode == 0, done.stderr
    assert "rebuilt" in done.stderr
    assert sqlite3.connect(db).execute("PRAGMA user_version").fetchone()[0] == 1
    assert any(name.startswith("analysis.sqlite3.corrupt-") for name in os.listdir(cache_dir))


def test_foreign_database_is_replaced_not_trusted(tmp_path):
    directory = tmp_path / "c"
    directory.mkdir(mode=0o700)
    db = sqlite3.connect(directory / "analysis.sqlite3")
    db.execute("CREATE TABLE summaries (x)")
    db.commit()
    db.close()
    os.chmod(directory / "analysis.sqlite3", 0o600)
    cache = AnalysisCache(directory)
    assert cache.rebuilt_from is not None
    assert cache.num_kernels() == 0


def test_cache_directory_others_may_read_is_made_private(env, tmp_path, capsys):
    cache_dir = env["KERNELCHECK_CACHE_DIR"]
    _warm(env)
    os.chmod(cache_dir, 0o755)
    AnalysisCache(cache_dir).close()  # nobody else could write: tightened, entries kept
    assert os.stat(cache_dir).st_mode & 0o777 == 0o700
    assert "made the cache directory private" in capsys.readouterr().err
    spec = fixture_launches(["elementwise.ptx"])[:2]
    log = tmp_path / "log.jsonl"
    done, out = run_client(spec, tmp_path, env, under_shim=True,
                           extra_args=("--log", str(log)))
    assert done.returncode == 0, done.stderr
    verdicts = {json.loads(line)["verdict"] for line in log.read_text().splitlines()}
    assert "not_proven" not in verdicts


def test_cache_directory_others_may_write_is_refused(env, tmp_path):
    cache_dir = env["KERNELCHECK_CACHE_DIR"]
    _warm(env)
    os.chmod(cache_dir, 0o775)
    with pytest.raises(CachePermissionError, match="mode 0775"):
        AnalysisCache(cache_dir)
    spec = fixture_launches(["elementwise.ptx"])[:2]
    done, out = run_client(spec, tmp_path, env, under_shim=True)
    assert done.returncode == 2 and out is None  # `kernelcheck run` did not start it
    assert "planted" in done.stderr
    # The shim itself, preloaded by hand, reads nothing from such a directory.
    from kernelcheck.shim.build import preload_library
    from kernelcheck.shim.launcher import shim_environment

    reports = tmp_path / "reports"
    reports.mkdir()
    log = tmp_path / "log.jsonl"
    by_hand = shim_environment(env, preload_library(), cache_dir, reports, str(log))
    done, out = run_client(spec, tmp_path, by_hand, name="by-hand")
    assert done.returncode == 0, done.stderr
    assert out is not None
    assert "not private" in done.stderr
    verdicts = {json.loads(line)["verdict"] for line in log.read_text().splitlines()}
    assert verdicts == {"not_proven"}


def test_cache_file_open_to_others_is_refused(env, tmp_path):
    _warm(env)
    os.chmod(os.path.join(env["KERNELCHECK_CACHE_DIR"], "analysis.sqlite3"), 0o644)
    with pytest.raises(CachePermissionError):
        AnalysisCache(env["KERNELCHECK_CACHE_DIR"])
