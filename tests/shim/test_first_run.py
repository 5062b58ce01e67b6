"""The first run of a program gets verdicts: launches made before their kernel's analysis
was ready are decided at exit, with the shim's own evaluator; and a program never runs
unchecked without saying so."""

from __future__ import annotations

import json
import subprocess
import sys


def _run(env, *args, timeout=300):
    return subprocess.run([sys.executable, "-m", "kernelcheck", "run", *args], env=env,
                          capture_output=True, text=True, timeout=timeout)


def test_cold_cache_launches_are_decided_at_exit(env, tmp_path):
    report = tmp_path / "report.json"
    done = _run(env, "--report", str(report), "--", sys.executable, "-m",
                "kernelcheck.demos.vector_add")
    assert done.returncode == 0, done.stderr
    assert "both launches correct" in done.stdout
    summary = json.loads(report.read_text())
    assert summary["instances"] == 2
    assert (summary["idempotent"], summary["not_idempotent"], summary["not_proven"]) == (1, 1, 0)
    assert summary["without_analysis"] == 0
    (kernel,) = summary["kernels"]
    assert kernel["name"] == "vec_add" and kernel["class"] == "conditional"
    assert "no_analysis" not in kernel["rules"]
    # The verdicts are those of a warm run: out = a + b is disjoint, a = a + b overlaps.
    assert kernel["rules"] == {"disjoint": 1, "overlap": 1}
    assert kernel["decided_at_exit"] == 2
    assert "decided at exit" in done.stderr


def test_a_warm_cache_decides_at_launch(env, tmp_path):
    first = _run(env, "--", sys.executable, "-m", "kernelcheck.demos.vector_add")
    assert first.returncode == 0, first.stderr
    report = tmp_path / "report.json"
    second = _run(env, "--report", str(report), "--", sys.executable, "-m",
                  "kernelcheck.demos.vector_add")
    summary = json.loads(report.read_text())
    assert summary["decided_at_exit"] == 0
    assert summary["kernels"][0]["rules"] == {"disjoint": 1, "overlap": 1}
    assert "waiting" not in second.stderr


def test_without_waiting_the_report_names_the_cure(env, tmp_path):
    report = tmp_path / "report.json"
    done = _run(env, "--analysis-wait", "0", "--report", str(report), "--", sys.executable,
                "-m", "kernelcheck.demos.vector_add")
    assert done.returncode == 0, done.stderr
    summary = json.loads(report.read_text())
    if summary["without_analysis"] == 0:  # the helper was faster than the program
        return
    assert summary["kernels"][0]["rules"].get("no_analysis") == summary["without_analysis"]
    assert "kernelcheck analyze --warm-cache" in done.stderr


def test_a_program_is_not_run_unchecked_without_saying_so(env, tmp_path):
    broken = dict(env, CC="/nonexistent/cc", PATH="/nonexistent",
                  KERNELCHECK_BUILD_DIR=str(tmp_path / "empty-build"))
    marker = tmp_path / "ran"
    program = [sys.executable, "-c", f"open({str(marker)!r}, 'w').close()"]
    done = _run(broken, "--", *program)
    assert done.returncode == 2
    assert not marker.exists()
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "no C compiler" in lines[0] and "apt install gcc" in lines[0]
    assert "--allow-unchecked" in lines[0]
    done = _run(broken, "--allow-unchecked", "--", *program)
    assert done.returncode == 0
    assert marker.exists()
    assert "UNCHECKED" in done.stderr and done.stderr.count("\n") == 1


def test_an_unsafe_cache_directory_stops_the_run(env, tmp_path):
    import os

    os.chmod(env["KERNELCHECK_CACHE_DIR"], 0o777)
    done = _run(env, "--", sys.executable, "-c", "print('ran')")
    assert done.returncode == 2
    assert "ran" not in done.stdout
    assert "planted" in done.stderr and env["KERNELCHECK_CACHE_DIR"] in done.stderr
