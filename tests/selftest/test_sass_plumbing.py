"""The SASS section's verdicts (lifted cubins) through the re-execution oracle, on the
stand-in: the kernels run from their PTX there, since the stand-in cannot launch cubins."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from kernelcheck.selftest.cases import expected
from kernelcheck.selftest.sass_check import cubin_path
from tests.conftest import FIXTURES

CLIENT = Path(__file__).resolve().parent / "clients" / "sass_client.py"


def test_sass_verdicts_go_through_the_oracle(standin_env):
    cases = ["vec_add#0", "inplace_add_one#0", "scale_checked#1", "atomic_max_const#0"]
    proc = subprocess.run([sys.executable, str(CLIENT), *cases], env=standin_env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["status"] == "passed", result
    figures = result["figures"]
    assert figures["cases"] == 4 and figures["idempotent"] >= 2
    assert figures["unsound"] == 0 and figures["not_claimed_changed"] >= 1


def test_cubins_are_found_for_cuda_sources_only():
    assert cubin_path(FIXTURES, "sm_90", "vec_add").name == "elementwise.cubin"
    assert cubin_path(FIXTURES, "sm_75", "vec_add") is None
    table = expected(FIXTURES)
    triton = next(k for k, spec in table.items() if "triton" in spec["source"])
    assert cubin_path(FIXTURES, "sm_90", triton) is None
