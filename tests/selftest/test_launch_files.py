"""The emulator section also runs the conformance suite's launch files on the device."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kernelcheck.selftest.emulator_check import conformance_launch_files
from kernelcheck.shim.build import ShimBuildError
from tests.conformance.harness import CASES as CASES_DIR
from tests.conformance.harness import discover_cases
from tests.conformance.xfails import XFAILS
from tests.conftest import FIXTURES


def test_every_conformance_case_is_found_beside_the_fixtures():
    found = {(p.resolve(), launch.resolve()) for p, launch in conformance_launch_files(FIXTURES)}
    expected = {(c.ptx.resolve(), c.launch.resolve()) for c in discover_cases()}
    assert found == expected and len(found) > 100
    assert all(launch.is_relative_to(CASES_DIR) for _, launch in found)


def test_a_launch_file_runs_on_the_device_and_the_emulator():
    try:
        from kernelcheck.standin import standin_environment
        env = standin_environment()
    except ShimBuildError as error:  # pragma: no cover - no compiler
        pytest.skip(f"stand-in driver cannot be built: {error}")
    cases = [c for c in discover_cases() if c.id not in XFAILS and c.group == "integer"][:2]
    script = ("import sys\n"
              "from pathlib import Path\n"
              "from kernelcheck.selftest.emulator_check import compare_launch_file\n"
              "for ptx, launch in zip(sys.argv[1::2], sys.argv[2::2]):\n"
              "    print(*compare_launch_file(Path(ptx), Path(launch)), sep='|')\n")
    args = [str(x) for c in cases for x in (c.ptx, c.launch)]
    done = subprocess.run([sys.executable, "-c", script, *args], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["equal|"] * len(cases)
