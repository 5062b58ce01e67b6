"""The bundled demo programs (kernelcheck.demos) on the stand-in driver: a cuda.bindings
program, an NVRTC-compiling cuda.bindings program and a cuda.core program run, get the right
answers, and get a verdict for every launch under ``kernelcheck run``, on a cold cache."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from kernelcheck.shim.build import ShimBuildError

try:
    from kernelcheck.standin import standin_environment
    ENV = standin_environment()
except ShimBuildError as error:  # pragma: no cover - no compiler on this machine
    pytest.skip(f"stand-in driver cannot be built: {error}", allow_module_level=True)


def _nvrtc_missing() -> str | None:
    try:
        from cuda.bindings import nvrtc

        nvrtc.nvrtcVersion()
    except Exception as error:  # noqa: BLE001  (any failure to load NVRTC)
        return f"NVRTC is not installed (pip install 'kernelcheck[nvrtc]'): {error}"
    return None


def _core_missing() -> str | None:
    try:
        import cuda.core  # noqa: F401
    except ImportError:
        return "cuda.core is not installed (pip install 'kernelcheck[core]')"
    return _nvrtc_missing()


DEMOS = [
    pytest.param("vector_add", None, id="vector_add"),
    pytest.param("nvrtc_saxpy", _nvrtc_missing(), id="nvrtc_saxpy"),
    pytest.param("core_saxpy", _core_missing(), id="core_saxpy"),
]


@pytest.mark.parametrize("demo, missing", DEMOS)
def test_demo_runs_on_the_stand_in(demo, missing):
    if missing:
        pytest.skip(missing)
    done = subprocess.run([sys.executable, "-m", f"kernelcheck.demos.{demo}"], env=ENV,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "both launches correct" in done.stdout
    assert "Segmentation" not in done.stderr


@pytest.mark.parametrize("demo, missing", DEMOS)
def test_demo_gets_verdicts_on_its_first_run(demo, missing, tmp_path):
    if missing:
        pytest.skip(missing)
    cache = tmp_path / "cache"
    env = dict(ENV, KERNELCHECK_CACHE_DIR=str(cache))
    report = tmp_path / "report.json"
    done = subprocess.run([sys.executable, "-m", "kernelcheck", "run", "--report", str(report),
                           "--", sys.executable, "-m", f"kernelcheck.demos.{demo}"], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    summary = json.loads(report.read_text())
    # One launch writes a buffer it also reads; the other writes a third buffer.
    assert (summary["idempotent"], summary["not_idempotent"], summary["not_proven"]) == (1, 1, 0)
    assert summary["without_analysis"] == 0


def test_export_tables_are_refused_not_left_null():
    program = ("import ctypes, sys\n"
               "lib = ctypes.CDLL('libcuda.so.1')\n"
               "table = ctypes.c_void_p(1)\n"
               "uuid = (ctypes.c_ubyte * 16)()\n"
               "status = lib.cuGetExportTable(ctypes.byref(table), uuid)\n"
               "print(status, table.value)\n")
    done = subprocess.run([sys.executable, "-c", program], env=ENV, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["801", "None"]  # CUDA_ERROR_NOT_SUPPORTED, no table
