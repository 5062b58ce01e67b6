"""The shim's control channel as a child process meets it (``KERNELCHECK_SCOPE_LOG``,
``KERNELCHECK_ANALYSIS_WAIT_MS``), and the plugin's cost when it is not enabled."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.pytest_plugin.conftest import CUDA_CLIENT

PROGRAM = '''
import numpy as np
from kc_client import Gpu

gpu = Gpu()
a = gpu.upload(np.arange(64, dtype=np.float32))
f = gpu.kernel("inplace.ptx", "inplace_add_one")
for _ in range(3):
    gpu.launch(f, (1, 1, 1), (64, 1, 1), np.uint64(a), np.int32(64))
'''


def _run(tmp_path, standin_libraries, wait_ms):
    from kernelcheck.shim.launcher import run_command
    from kernelcheck.standin import standin_environment

    cache = tmp_path / f"cache-{wait_ms}"
    cache.mkdir(mode=0o700)
    (tmp_path / "kc_client.py").write_text(CUDA_CLIENT)
    (tmp_path / "program.py").write_text(PROGRAM)
    scope = tmp_path / f"scope-{wait_ms}.jsonl"
    env = standin_environment()
    env.update(KERNELCHECK_CACHE_DIR=str(cache), KERNELCHECK_SCOPE_LOG=str(scope),
               KERNELCHECK_ANALYSIS_WAIT_MS=str(wait_ms), PYTHONPATH=str(tmp_path))
    env.pop("LD_PRELOAD", None)
    done = run_command([sys.executable, str(tmp_path / "program.py")], env=env, quiet=True)
    assert done.returncode == 0
    return [json.loads(line) for line in scope.read_text().splitlines()]


def test_a_child_records_into_the_scope_and_waits_for_the_analysis(tmp_path,
                                                                   standin_libraries):
    records = _run(tmp_path, standin_libraries, 120_000)
    assert [r["kernel"] for r in records] == ["inplace_add_one"] * 3
    # a cold cache, yet even the first launch is decided: it waited for the helper
    assert [r["verdict"] for r in records] == ["not_idempotent"] * 3
    assert {r["rule"] for r in records} == {"overlap"}
    first = records[0]
    assert first["grid"] == [1, 1, 1] and first["block"] == [64, 1, 1]
    assert len(bytes.fromhex(first["params"])) == 12       # u64 pointer + u32 n
    assert int.from_bytes(bytes.fromhex(first["params"])[8:12], "little") == 64
    assert len(first["image_hash"]) == 64 and first["params_truncated"] is False


def test_without_the_wait_a_cold_first_launch_is_not_proven(tmp_path, standin_libraries):
    records = _run(tmp_path, standin_libraries, 0)
    assert records[0]["verdict"] == "not_proven" and records[0]["rule"] == "no_analysis"


def test_importing_the_entry_point_imports_nothing_heavy():
    code = ("import sys, pytest, kernelcheck.pytest_plugin; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('z3', 'numpy', 'kernelcheck', 'cuda', 'sqlite3')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "['kernelcheck', 'kernelcheck.pytest_plugin']"
