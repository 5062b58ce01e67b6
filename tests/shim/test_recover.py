"""Recovery through the shim (`kernelcheck run --recover`) on the stand-in driver: a launch
the stand-in fails part way, at the launch or at the next synchronize, is replayed from
the bytes saved before it, and the program's results equal a fault-free run."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from kernelcheck.cache import AnalysisCache
from tests.shim.conftest import CLIENTS, FIXTURES

FILES = ("elementwise.ptx", "inplace.ptx", "atomics.ptx")
N = 1024


@pytest.fixture
def warm_env(env, tmp_path):
    """The shim's environment with the fixture kernels analysed (in this process, so the
    analyzer version the shim looks for is the one the rows were written with)."""
    from kernelcheck.cache.warm import warm_cache
    from kernelcheck.shim.build import preload_library
    from kernelcheck.shim.launcher import shim_environment

    cache = AnalysisCache(env["KERNELCHECK_CACHE_DIR"])
    try:
        for name in FILES:
            warm_cache(FIXTURES / "ptx" / "sm_90" / name, cache=cache)
    finally:
        cache.close()
    reports = tmp_path / "reports"
    reports.mkdir()
    return shim_environment(env, preload_library(), env["KERNELCHECK_CACHE_DIR"], reports)


def _run(env, tmp_path, steps, name, **extra):
    out = tmp_path / f"{name}.json"
    done = subprocess.run([sys.executable, str(CLIENTS / "recover_client.py"), str(out),
                           *steps], env=dict(env, **extra), capture_output=True, text=True,
                          timeout=600)
    return done, json.loads(out.read_text()) if out.exists() else None


def _recovery(env):
    from kernelcheck.shim.report import read_reports

    return read_reports(env["KERNELCHECK_REPORT_DIR"]).recovery


STEPS = ["vec_add", "inplace", "atomic", "inplace"]


@pytest.mark.parametrize("failing", [1, 2, 3, 4])
def test_a_launch_failing_part_way_is_recovered(warm_env, tmp_path, failing):
    # 16 steps: the failing launch's writes have landed (a replay without the restore
    # would add twice)
    _, clean = _run(warm_env, tmp_path, STEPS, "clean")
    assert clean and "error" not in clean
    done, out = _run(warm_env, tmp_path, STEPS, "faulty", KERNELCHECK_RECOVER="1",
                     KERNELCHECK_STANDIN_FAIL_LAUNCH=f"{failing}:16")
    assert done.returncode == 0, done.stderr
    assert out == clean
    assert "failed by KERNELCHECK_STANDIN_FAIL_LAUNCH" in done.stderr  # the fault happened
    r = _recovery(warm_env)
    assert (r.faults, r.recovered, r.unrecovered) == (1, 1, 0)
    assert "kernelcheck: recovered a failed launch of" in done.stderr


def test_without_recover_the_program_sees_the_error(warm_env, tmp_path):
    done, out = _run(warm_env, tmp_path, STEPS, "faulty",
                     KERNELCHECK_STANDIN_FAIL_LAUNCH="2:2")
    assert done.returncode == 3
    assert out == {"error": "CUDA_ERROR_LAUNCH_FAILED"}
    assert _recovery(warm_env) is None


def test_bytes_saved_are_the_clobbered_bytes(warm_env, tmp_path):
    done, _ = _run(warm_env, tmp_path, ["vec_add", "sync", "inplace", "sync", "atomic"],
                   "saves", KERNELCHECK_RECOVER="1")
    assert done.returncode == 0, done.stderr
    r = _recovery(warm_env)
    assert r.launches == (1, 2, 0)
    assert r.saved_bytes[0] == 0  # idempotent vec_add: nothing
    assert r.saved_launches == (0, 2, 0)
    # inplace_add_one clobbers the whole array a; atomic_add_all the 4-byte sum
    assert r.saved_bytes[1] == 4 * N + 4
    assert (r.faults, r.unrecoverable_launches) == (0, 0)


def test_window_saves_let_a_fault_at_synchronize_replay_the_stream(warm_env, tmp_path):
    steps = ["inplace", "vec_add", "inplace", "atomic"]
    _, clean = _run(warm_env, tmp_path, steps, "clean")
    done, out = _run(warm_env, tmp_path, steps, "faulty", KERNELCHECK_RECOVER="1",
                     KERNELCHECK_STANDIN_FAIL_LAUNCH="3:16:sync")
    assert done.returncode == 0, done.stderr
    assert out == clean
    r = _recovery(warm_env)
    assert (r.faults, r.recovered, r.replayed_launches) == (1, 1, 4)
    # vec_add reads a, which the later inplace writes: the window saves it before that
    # launch; the first inplace alone needs only its own clobbered bytes
    assert r.saved_bytes[1] >= 2 * 4 * N


def test_a_fault_at_context_synchronize_is_recovered(warm_env, tmp_path):
    steps = ["inplace", "atomic", "ctxsync"]
    _, clean = _run(warm_env, tmp_path, steps, "clean")
    done, out = _run(warm_env, tmp_path, steps, "faulty", KERNELCHECK_RECOVER="1",
                     KERNELCHECK_STANDIN_FAIL_LAUNCH="1:16:sync")
    assert done.returncode == 0, done.stderr
    assert out == clean
    assert _recovery(warm_env).recovered == 1


def test_a_failing_shadow_allocation_degrades_to_unrecovered(warm_env, tmp_path):
    done, out = _run(warm_env, tmp_path, STEPS, "faulty", KERNELCHECK_RECOVER="1",
                     KERNELCHECK_SHIM_FAULT="shadow", KERNELCHECK_STANDIN_FAIL_LAUNCH="2:2")
    assert done.returncode == 3  # the original error, not a crash
    assert out == {"error": "CUDA_ERROR_LAUNCH_FAILED"}
    assert done.stderr.count("snapshot could not be taken") == 1
    r = _recovery(warm_env)
    assert (r.faults, r.recovered, r.unrecovered) == (1, 0, 1)
    assert r.unrecoverable_launches == 1  # the failing inplace ran unprotected
    # the idempotent launch needs no snapshot: a fault there is still recovered
    done, out = _run(warm_env, tmp_path, STEPS, "faulty", KERNELCHECK_RECOVER="1",
                     KERNELCHECK_SHIM_FAULT="shadow", KERNELCHECK_STANDIN_FAIL_LAUNCH="1:2")
    assert done.returncode == 0, done.stderr


def test_not_proven_instances_without_analysis_are_never_replayed(env, tmp_path, libraries):
    """No analysis (cold cache, no helper): the parameters cannot be given again, so a
    fault is passed to the program, as without recovery."""
    from kernelcheck.shim.launcher import shim_environment

    reports = tmp_path / "reports"
    reports.mkdir()
    cold = shim_environment(env, libraries[0], env["KERNELCHECK_CACHE_DIR"], reports)
    done, out = _run(cold, tmp_path, STEPS, "faulty", KERNELCHECK_RECOVER="1",
                     KERNELCHECK_STANDIN_FAIL_LAUNCH="2:2")
    assert done.returncode == 3
    assert out == {"error": "CUDA_ERROR_LAUNCH_FAILED"}
    r = _recovery(cold)
    assert r.launches[2] >= 1 and r.unrecovered == 1


def test_kernelcheck_run_recover_prints_the_recovery(env, tmp_path):
    report = tmp_path / "report.json"
    done = subprocess.run([sys.executable, "-m", "kernelcheck.cli", "run", "--recover",
                           "--report", str(report), "--", sys.executable,
                           str(CLIENTS / "recover_client.py"), str(tmp_path / "out.json"),
                           *STEPS], env=dict(env, KERNELCHECK_STANDIN_FAIL_LAUNCH="3:2"),
                          capture_output=True, text=True, timeout=600)
    assert "kernelcheck: recovery:" in done.stderr
    data = json.loads(report.read_text())
    assert data["recovery"]["faults"] == 1
    # with a cold cache the outcome depends on whether the helper analysed atomics.ptx in
    # time; either way the counts are consistent and nothing crashed
    rec = data["recovery"]
    assert rec["recovered"] + rec["unrecovered"] == 1
    assert done.returncode == (0 if rec["recovered"] else 3)


def test_a_not_proven_instance_saves_every_allocation_and_is_recovered(warm_env, tmp_path):
    """A kernel the analysis could not prove anything about (its cached check says only
    "not proven"): the shim saves every live allocation before the launch, so a fault part
    way through is still replayed to the fault-free result."""
    import dataclasses

    from kernelcheck.analysis.summary import analyze_module
    from kernelcheck.cache import AnalysisCache
    from kernelcheck.cache.store import image_hash
    from kernelcheck.cache.warm import ANY_ARCH
    from kernelcheck.launch.check import LaunchCheck
    from kernelcheck.ptx.parser import parse_ptx

    data = (FIXTURES / "ptx" / "sm_90" / "inplace.ptx").read_bytes()
    summaries = []
    for s in analyze_module(parse_ptx(data)):
        if s.name == "inplace_add_one":
            check = LaunchCheck(s.name, s.launch_check.param_size, (), (), (),
                                "an instruction the analysis does not model (test)")
            s = dataclasses.replace(s, kernel_class="not_proven", launch_check=check)
        summaries.append(s)
    cache = AnalysisCache(warm_env["KERNELCHECK_CACHE_DIR"])
    try:
        cache.put_summaries(image_hash(data), ANY_ARCH, summaries)
    finally:
        cache.close()
    _, clean = _run(warm_env, tmp_path, ["vec_add", "inplace"], "clean")
    done, out = _run(warm_env, tmp_path, ["vec_add", "inplace"], "faulty",
                     KERNELCHECK_RECOVER="1", KERNELCHECK_STANDIN_FAIL_LAUNCH="2:16")
    assert done.returncode == 0, done.stderr
    assert out == clean
    r = _recovery(warm_env)
    assert (r.faults, r.recovered) == (1, 1)
    assert r.saved_launches[2] == 1 and r.saved_bytes[2] >= 4 * N
