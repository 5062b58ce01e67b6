"""scripts/offline_bundle.py: what it fetches and builds, the size limit, the bundle's layout;
and (slow, needs PyPI) a real bundle installed without network into Python 3.12, running
the self-test from it."""

from __future__ import annotations

import glob
import importlib.util
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "offline_bundle.py"


def _script():
    spec = importlib.util.spec_from_file_location("offline_bundle", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _fake_run(sizes: dict):
    """A runner that writes wheels of the given sizes where pip would, and records."""
    calls = []

    def run(cmd):
        calls.append(cmd)
        dest = Path(cmd[cmd.index("-d") + 1] if "-d" in cmd else cmd[cmd.index("-w") + 1])
        names = sizes if "download" in cmd else {"kernelcheck-0.1.0-py3-none-any.whl": 1000}
        for name, size in names.items():
            (dest / name).write_bytes(b"\0" * size)
    return run, calls


def test_runtime_requirements_come_from_pyproject_less_the_skipped():
    bundle = _script()
    reqs = bundle.runtime_requirements(ROOT / "pyproject.toml", skip=["NumPy"],
                                       cuda_bindings="cuda-bindings>=12.8,<13")
    names = [bundle._name(r) for r in reqs]
    assert "numpy" not in names and "z3-solver" in names and "torch" not in names
    assert "cuda-bindings>=12.8,<13" in reqs
    cmd = bundle.download_command(reqs, Path("/w"), "3.12")
    assert cmd[3] == "download" and "--only-binary=:all:" in cmd
    assert cmd[cmd.index("--python-version") + 1] == "3.12"
    assert "manylinux_2_28_x86_64" in cmd and cmd[-len(reqs):] == reqs


def test_the_bundle_holds_wheels_project_fixtures_and_one_command(tmp_path):
    bundle = _script()
    run, calls = _fake_run({"z3_solver-4.15-py3-none-any.whl": 3 << 20,
                            "lark-1.3-py3-none-any.whl": 1 << 20})
    sizes = bundle.build_bundle(tmp_path / "b", run=run, limit_mib=8)
    assert [c[3] for c in calls] == ["download", "wheel"]
    assert sizes["wheelhouse"] == 4 << 20 and sizes["wheels"][0][0].startswith("z3_solver")
    out = tmp_path / "b"
    assert (out / "fixtures" / "expected.toml").is_file()
    assert (out / "fixtures" / "ptx" / "sm_80" / "elementwise.ptx").is_file()
    assert (out / "fixtures" / "cubin" / "sm_90").is_dir()
    assert not (out / "fixtures" / "src").exists()
    script = (out / "run_selftest.sh").read_text()
    assert "--no-index" in script and "selftest --device --fixtures fixtures" in script
    assert os.access(out / "run_selftest.sh", os.X_OK)


def test_a_wheelhouse_over_the_limit_is_refused_naming_the_largest(tmp_path):
    bundle = _script()
    run, _ = _fake_run({"z3_solver-4.15-py3-none-any.whl": 5 << 20,
                        "numpy-2.5-cp312-cp312-manylinux_2_28_x86_64.whl": 2 << 20})
    with pytest.raises(SystemExit, match=r"7\.0 MiB, over the limit of 6 MiB.*z3_solver"):
        bundle.build_bundle(tmp_path / "b", run=run, limit_mib=6)


def _python312() -> str | None:
    found = shutil.which("python3.12")
    candidates = ([found] if found else []) + sorted(
        glob.glob(os.path.expanduser("~/.pyenv/versions/3.12*/bin/python3.12")))
    for path in candidates:
        if subprocess.run([path, "-V"], capture_output=True).returncode == 0:
            return path
    return None


@pytest.mark.slow
def test_a_real_bundle_installs_offline_and_runs_the_selftest(tmp_path):
    python = _python312()
    if python is None:
        pytest.skip("no Python 3.12 here")
    bundle = _script()
    out = tmp_path / "bundle"
    sizes = bundle.build_bundle(out)
    assert sizes["wheelhouse"] <= 64 << 20
    venv = tmp_path / "venv"
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    env = dict(os.environ, PIP_CONFIG_FILE=os.devnull)  # no index, no find-links of ours
    env.pop("LD_PRELOAD", None)
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-index",
                    "--find-links", str(out / "wheelhouse"), "--find-links", str(out),
                    "kernelcheck"], check=True, env=env)
    done = subprocess.run([str(venv / "bin" / "python"), "-m", "kernelcheck", "selftest",
                           "--quick", "--section", "reexec", "--driver", "standin",
                           "--fixtures", str(out / "fixtures")], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "| reexec | passed |" in done.stdout
