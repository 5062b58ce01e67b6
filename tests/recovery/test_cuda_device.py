"""The cuda-python device end to end on the stand-in libcuda.so.1: a launch that fails part
way (the stand-in's fault switch) is detected through the driver's status and replayed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

CLIENT = Path(__file__).resolve().parent / "clients" / "cuda_recovery_client.py"


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    from kernelcheck.shim.build import ShimBuildError, standin_library
    os.environ.setdefault("KERNELCHECK_BUILD_DIR", str(tmp_path_factory.mktemp("build")))
    try:
        library = standin_library()
    except ShimBuildError as error:  # pragma: no cover - no C compiler
        pytest.skip(f"cannot build the stand-in driver: {error}")
    base = dict(os.environ)
    base.pop("LD_PRELOAD", None)
    base["LD_LIBRARY_PATH"] = os.pathsep.join(
        p for p in (str(library.parent), base.get("LD_LIBRARY_PATH")) if p)
    return base


def _client(env, *args, fail=None) -> dict:
    env = dict(env)
    if fail:
        env["KERNELCHECK_STANDIN_FAIL_LAUNCH"] = fail
    proc = subprocess.run([sys.executable, str(CLIENT), *args], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_clean_run_needs_no_recovery_and_saves_only_the_clobbered_bytes(env):
    out = _client(env)
    assert out["golden"] and out["detections"] == [] and out["replays"] == []
    assert [r["plan"] for r in out["launches"]] == ["nothing", "clobbered"]
    assert out["launches"][1]["saved_bytes"] == 4096 and out["allocations"] == 3


def test_launch_failed_part_way_leaves_corrupt_output_without_recovery(env):
    out = _client(env, "plain", fail="2:3")
    assert out["error"] == "launch_failure" and not out["golden"]


def test_launch_failed_part_way_is_replayed_from_the_saved_bytes(env):
    out = _client(env, fail="2:3")
    assert [d["kind"] for d in out["detections"]] == ["device_error"]
    assert "CUDA_ERROR_LAUNCH_FAILED" in out["detections"][0]["detail"]
    assert out["replays"][0]["launches"] == [1] and out["replays"][0]["succeeded"]
    assert out["unrecovered"] == 0 and out["golden"]


def test_failure_of_an_idempotent_launch_is_replayed_with_nothing_saved(env):
    out = _client(env, fail="1:2")
    assert out["launches"][0]["saved_bytes"] == 0
    assert out["replays"][0]["launches"] == [0] and out["golden"]
