"""Shared set-up of the pytest plugin's tests: suites run by pytester in a subprocess,
against the stand-in driver, with a small cuda-python helper module beside them."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PTX_DIR = ROOT / "fixtures" / "ptx" / "sm_90"

#: A cuda-python (cuda.bindings.driver) helper the suites import: real driver calls, which
#: the stand-in libcuda.so.1 runs on the CPU emulator here and a GPU would run for real.
CUDA_CLIENT = textwrap.dedent('''
    import numpy as np
    from cuda.bindings import driver as cu

    PTX_DIR = {ptx_dir!r}

    def ok(result):
        if result[0] != cu.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"driver call failed: {{cu.cuGetErrorName(result[0])[1]}}")
        return result[1] if len(result) == 2 else result[1:]

    class Gpu:
        def __init__(self):
            ok(cu.cuInit(0))
            ok(cu.cuCtxSetCurrent(ok(cu.cuDevicePrimaryCtxRetain(ok(cu.cuDeviceGet(0))))))
            self.modules = {{}}

        def kernel(self, ptx, name):
            if ptx not in self.modules:
                image = open(f"{{PTX_DIR}}/{{ptx}}", "rb").read() + b"\\0"
                self.modules[ptx] = ok(cu.cuModuleLoadData(image))
            return ok(cu.cuModuleGetFunction(self.modules[ptx], name.encode()))

        def upload(self, array):
            array = np.ascontiguousarray(array)
            ptr = int(ok(cu.cuMemAlloc(array.nbytes)))
            ok(cu.cuMemcpyHtoD(ptr, array.ctypes.data, array.nbytes))
            return ptr

        def download(self, ptr, n, dtype=np.float32):
            out = np.empty(n, dtype=dtype)
            ok(cu.cuMemcpyDtoH(out.ctypes.data, ptr, out.nbytes))
            return out

        def launch(self, function, grid, block, *args):
            """args: numpy scalars (np.uint64 pointers, np.int32, np.float32, ...)."""
            values = [np.array([a]) for a in args]
            params = np.array([v.ctypes.data for v in values] or [0], dtype=np.uint64)
            ok(cu.cuLaunchKernel(function, *grid, *block, 0, 0, params.ctypes.data, 0))
            ok(cu.cuCtxSynchronize())
''').format(ptx_dir=str(PTX_DIR))


@pytest.fixture(scope="session")
def standin_libraries(tmp_path_factory):
    """The shim and the stand-in driver, built once into a private directory."""
    from kernelcheck.shim.build import ShimBuildError, preload_library, standin_library

    os.environ.setdefault("KERNELCHECK_BUILD_DIR", str(tmp_path_factory.mktemp("build")))
    try:
        return preload_library(), standin_library()
    except ShimBuildError as error:  # pragma: no cover - no C compiler
        pytest.skip(f"cannot build the shim: {error}")


@pytest.fixture
def suite(pytester, monkeypatch, standin_libraries, tmp_path_factory):
    """A pytester directory holding ``kc_client.py``, with the stand-in driver on
    ``LD_LIBRARY_PATH`` and a fresh private analysis cache."""
    cache = tmp_path_factory.mktemp("cache")
    cache.chmod(0o700)
    monkeypatch.setenv("KERNELCHECK_CACHE_DIR", str(cache))
    monkeypatch.setenv("LD_LIBRARY_PATH", os.pathsep.join(
        p for p in (str(standin_libraries[1].parent), os.environ.get("LD_LIBRARY_PATH"))
        if p))
    monkeypatch.delenv("LD_PRELOAD", raising=False)
    monkeypatch.delenv("KERNELCHECK_PYTEST_REEXEC", raising=False)
    monkeypatch.delenv("KERNELCHECK_SCOPE_LOG", raising=False)
    pytester.makepyfile(kc_client=CUDA_CLIENT)
    return pytester


def load_report(path: Path) -> dict:
    """The plugin's JSON report, by test name (the part after ``::``)."""
    data = json.loads(path.read_text())
    data["by_test"] = {t["test"].split("::")[-1]: t for t in data["tests"]}
    return data
