"""cuda-python programs under `kernelcheck run` on the stand-in driver: the verdicts recorded
per instance are the expected ones and the program's results are those of a plain run."""

from __future__ import annotations

import json
import subprocess
import sys

from kernelcheck.launch.evaluate import evaluate
from tests.shim.conftest import fixture_launches, run_client

FILES = ("elementwise.ptx", "inplace.ptx", "atomics.ptx", "stencil.ptx")


def _log(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def _warm(env, files):
    for name in files:
        done = subprocess.run([sys.executable, "-m", "kernelcheck.cli", "analyze",
                               "--warm-cache", f"fixtures/ptx/sm_90/{name}"], env=env,
                              capture_output=True, text=True, cwd=_root())
        assert done.returncode == 0, done.stderr


def _root():
    from tests.shim.conftest import ROOT
    return ROOT


def _analysis_verdict(launch):
    from kernelcheck.analysis.summary import analyze_module
    from kernelcheck.ptx.parser import parse_ptx_file

    module = parse_ptx_file(launch["ptx"])
    summary = next(s for s in analyze_module(module) if s.name == launch["kernel"])
    return evaluate(summary.launch_check, bytes.fromhex(launch["params"]), launch["grid"],
                    launch["block"]).verdict


def test_warm_cache_verdicts_are_the_expected_ones(env, tmp_path):
    spec = fixture_launches(FILES)
    assert {s["expected"] for s in spec} == {"idempotent", "not_idempotent"}
    assert {s["form"] for s in spec} == {"params", "extra", "ex", "library", "coop"}
    plain, plain_out = run_client(spec, tmp_path, env, name="plain")
    assert plain.returncode == 0, plain.stderr
    _warm(env, FILES)
    log = tmp_path / "instances.jsonl"
    report = tmp_path / "report.json"
    shim, shim_out = run_client(spec, tmp_path, env, under_shim=True, name="shim",
                                extra_args=("--log", str(log), "--report", str(report)))
    assert shim.returncode == 0, shim.stderr
    assert shim_out == plain_out  # the shim changed nothing the program computed
    records = _log(log)
    assert len(records) == len(spec)
    for launch, record in zip(spec, records, strict=True):
        assert record["kernel"] == launch["kernel"]
        assert record["params"] == launch["params"]
        assert record["verdict"] == _analysis_verdict(launch), (launch, record)
        if launch["expected"] == "not_idempotent":
            assert record["verdict"] != "idempotent", (launch, record)
        assert record["verdict"] != "not_proven", (launch, record)
    summary = json.loads(report.read_text())
    assert summary["instances"] == len(spec)
    assert summary["idempotent"] == sum(r["verdict"] == "idempotent" for r in records)
    assert "kernels seen" in shim.stderr


def test_cold_cache_helper_analyses_while_the_program_runs(env, tmp_path):
    launch = fixture_launches(["inplace.ptx"])[0]
    launch.update(repeat=40, sleep=0.1)
    log = tmp_path / "instances.jsonl"
    done, _ = run_client([launch], tmp_path, env, under_shim=True,
                         extra_args=("--log", str(log)))
    assert done.returncode == 0, done.stderr
    verdicts = [r["verdict"] for r in _log(log)]
    assert verdicts[0] == "not_proven"  # nothing cached yet: the first launch is not proven
    decided = [v for v in verdicts if v != "not_proven"]
    assert decided, "the helper never delivered an analysis"
    assert set(decided) == {_analysis_verdict(launch)}
    # once decided, it stays decided
    first = verdicts.index(decided[0])
    assert "not_proven" not in verdicts[first:]


def test_exit_status_is_returned_unchanged(env):
    done = subprocess.run([sys.executable, "-m", "kernelcheck.cli", "run", "--",
                           sys.executable, "-c", "import sys; sys.exit(7)"], env=env,
                          capture_output=True, text=True)
    assert done.returncode == 7
