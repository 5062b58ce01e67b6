"""Helpers for the self-test's tests: the stand-in driver's environment, and a command runner."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def standin_env(tmp_path_factory) -> dict:
    """An environment whose CUDA programs get the stand-in driver, with a private cache."""
    from kernelcheck.shim.build import ShimBuildError, standin_library

    os.environ.setdefault("KERNELCHECK_BUILD_DIR", str(tmp_path_factory.mktemp("build")))
    try:
        library = standin_library()
    except ShimBuildError as error:  # pragma: no cover - no C compiler
        pytest.skip(f"cannot build the stand-in driver: {error}")
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    env["LD_LIBRARY_PATH"] = os.pathsep.join(
        p for p in (str(library.parent), env.get("LD_LIBRARY_PATH")) if p)
    cache = tmp_path_factory.mktemp("cache")
    cache.chmod(0o700)
    env["KERNELCHECK_CACHE_DIR"] = str(cache)
    return env


def selftest(env: dict, *args: str, out: Path, timeout: float = 400) -> tuple[int, dict, str]:
    """Run ``kernelcheck selftest ARGS -o OUT``; (exit status, report, stdout)."""
    proc = subprocess.run([sys.executable, "-m", "kernelcheck", "selftest", *args, "-o",
                           str(out)], env=env, capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)
    report = json.loads(out.read_text()) if out.exists() else {}
    return proc.returncode, report, proc.stdout + proc.stderr
