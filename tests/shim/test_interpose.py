"""The interposed entry points: the generated list, the cuGetProcAddress remap, and proof
that a cuda-python program is seen through dlsym and cuGetProcAddress, not through symbol
interposition inside the driver."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from tests.shim.conftest import CLIENTS, FIXTURES

ELEMENTWISE = FIXTURES / "ptx" / "sm_90" / "elementwise.ptx"


@pytest.fixture(autouse=True)
def _built(libraries):
    return libraries


def test_every_listed_entry_point_is_exported(libraries):
    from kernelcheck.shim.build import source_dir
    from kernelcheck.shim.native import entrypoints

    listed = re.findall(r"^\s+X\((\w+),", (source_dir() / "entrypoints.h").read_text(), re.M)
    assert list(entrypoints()) == listed
    symbols = subprocess.run(["nm", "-D", "--defined-only", str(libraries[0])],
                             capture_output=True, text=True).stdout.split()
    for name in [*listed, "dlsym"]:
        assert name in symbols, name
    required = {"cuLaunchKernel", "cuLaunchKernel_ptsz", "cuLaunchKernelEx",
                "cuLaunchCooperativeKernel", "cuModuleLoadData", "cuModuleLoadDataEx",
                "cuModuleLoadFatBinary", "cuModuleLoad", "cuLibraryLoadData",
                "cuLibraryLoadFromFile", "cuModuleGetFunction", "cuLibraryGetKernel",
                "cuKernelGetFunction", "cuMemAlloc_v2", "cuMemAllocAsync", "cuMemAllocPitch_v2",
                "cuMemAllocManaged", "cuMemAllocFromPoolAsync", "cuMemFree_v2",
                "cuMemFreeAsync", "cuGraphLaunch",
                "cuGetProcAddress", "cuGetProcAddress_v2"}
    assert required <= set(listed)


@pytest.mark.parametrize("symbol, version, flags, variant", [
    ("cuGetProcAddress", 11030, 0, "cuGetProcAddress"),
    ("cuGetProcAddress", 12000, 0, "cuGetProcAddress_v2"),
    ("cuLaunchKernel", 12000, 0, "cuLaunchKernel"),
    ("cuLaunchKernel", 12000, 2, "cuLaunchKernel_ptsz"),
    ("cuLaunchKernel", 6050, 2, "cuLaunchKernel"),   # no per-thread variant before 7.0
    ("cuMemAlloc", 3020, 0, "cuMemAlloc_v2"),
    ("cuMemAlloc", 3010, 0, None),                   # the 32-bit size ABI: not hooked
    ("cuLibraryLoadData", 11080, 0, None),
    ("cuMemFreeAsync", 12000, 2, "cuMemFreeAsync_ptsz"),
    ("cuCtxCreate", 12000, 0, None),
])
def test_get_proc_address_remap(symbol, version, flags, variant):
    from kernelcheck.shim.native import remap

    assert remap(symbol, version, flags) == variant


def _count(env, tmp_path, extra_env):
    report = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, "-m", "kernelcheck.cli", "run", "--report", str(report), "--",
         sys.executable, str(CLIENTS / "threaded_client.py"), str(ELEMENTWISE), "vec_add",
         "1", "3"], env={**env, **extra_env}, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(report.read_text())["instances"]


def test_cuda_python_launches_are_seen_only_through_dlsym_and_get_proc_address(env,
                                                                               tmp_path):
    """cuda-bindings takes cuGetProcAddress_v2 with dlsym on its libcuda handle and
    resolves everything through it; the stand-in binds its entry points internally. With
    the dlsym hook switched off the shim sees nothing, so what it sees otherwise comes
    through the documented route, not through interposition inside the driver."""
    assert _count(env, tmp_path, {"KERNELCHECK_STANDIN_NOOP": "1"}) == 3
    assert _count(env, tmp_path, {"KERNELCHECK_STANDIN_NOOP": "1",
                                  "KERNELCHECK_SHIM_NO_DLSYM": "1"}) == 0
