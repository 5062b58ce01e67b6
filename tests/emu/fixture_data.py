"""Fixture kernels for the emulator tests: expectations, PTX files, and running an instance."""

from __future__ import annotations

import tomllib
from functools import cache, lru_cache
from pathlib import Path

import numpy as np

from kernelcheck.emu import Emulator
from kernelcheck.emu.instances import param_values, read_buffers, setup
from kernelcheck.emu.workloads import get_workload
from kernelcheck.ptx.parser import parse_ptx_file

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
NVCC_FLAVOURS = ("sm_80", "sm_90", "nvrtc")


@lru_cache(maxsize=1)
def expected() -> dict:
    with open(FIXTURES / "expected.toml", "rb") as f:
        return tomllib.load(f)["kernels"]


def ptx_files(kernel: str) -> list[Path]:
    """The PTX files that define ``kernel`` (nvcc sm_80/sm_90 and NVRTC, Triton, numba)."""
    source = expected()[kernel]["source"]
    if source.endswith(".cu"):
        stem = source[:-3]
        return [FIXTURES / "ptx" / f / f"{stem}.ptx" for f in NVCC_FLAVOURS
                if (FIXTURES / "ptx" / f / f"{stem}.ptx").exists()]
    if source.startswith("triton"):
        return sorted((FIXTURES / "ptx" / "triton").glob(f"{kernel}_sm*.ptx"))
    short = next(s for s in ("scale_numba", "increment_numba", "histogram_numba")
                 if s in kernel)
    return sorted((FIXTURES / "ptx" / "numba").glob(f"{short}_sm*.ptx"))


@cache
def module(path: Path):
    return parse_ptx_file(path)


def entry_name(path: Path, kernel: str) -> str:
    """The entry of ``kernel`` in ``path`` (numba names differ by target in one token)."""
    names = [k.name for k in module(path).kernels]
    if kernel in names:
        return kernel
    prefix = kernel.split("B2v")[0]
    return next(n for n in names if n.startswith(prefix))


def scalars(params: dict) -> dict:
    """Instance params with the plain pointer arguments removed (disjoint placement)."""
    out = {}
    for k, v in params.items():
        if isinstance(v, list):
            out[k] = [[o, s, 0 if o == 0 and s == 8 else x] for o, s, x in v]
        elif isinstance(v, int) and v >= 0x7E0000000000:
            continue
        else:
            out[k] = v
    return out


def run_instance(kernel: str, path: Path, params: dict, grid, block, *, seed: int = 0,
                 trace: bool = False, allocations=(), emu: Emulator | None = None):
    """Set up and run one instance; returns (emu, placement, inputs, result)."""
    emu = emu or Emulator()
    rng = np.random.default_rng(seed)
    params = dict(params)
    for struct in [k for k, v in params.items() if isinstance(v, list)]:
        if all(x == 0 for o, s, x in params[struct] if o == 0):
            params[struct] = [[o, s, x] for o, s, x in params[struct] if o != 0]
    placement = setup(emu, kernel, params, grid, block, rng, allocations)
    inputs = read_buffers(emu, placement)
    program = emu.load_module(module(path))
    names = expected()[kernel]["param_names"]
    values = param_values(names, placement.params)
    result = emu.launch(program, entry_name(path, kernel), grid=grid, block=block,
                        params=values, trace=trace, shared_bytes=get_workload(kernel).shared_bytes)
    return emu, placement, inputs, result


def check_reference(kernel: str, emu, placement, inputs, grid, block) -> list[str]:
    """Differences between the buffers after the run and the workload's reference."""
    wl = get_workload(kernel)
    grid3 = tuple(grid) + (1,) * (3 - len(grid))
    block3 = tuple(block) + (1,) * (3 - len(block))
    want = wl.reference(inputs, placement.params, grid3, block3)
    if want is None:
        return []
    got = read_buffers(emu, placement)
    problems = []
    for key, value in want.items():
        have = got[key]
        value = np.asarray(value).astype(have.dtype)
        if have.dtype.kind == "f":
            ok = np.allclose(have.astype(np.float64), value.astype(np.float64),
                             rtol=wl.rtol, atol=wl.atol, equal_nan=True)
        else:
            ok = np.array_equal(have, value)
        if not ok:
            bad = np.flatnonzero(~np.isclose(have.astype(np.float64),
                                             value.astype(np.float64), rtol=wl.rtol,
                                             atol=wl.atol))
            problems.append(f"{key}: {len(bad)} elements differ, first {bad[:5]}: "
                            f"got {have[bad[:3]]} want {value[bad[:3]]}")
    return problems


def prepare(kernel: str, path: Path, inst: dict, seed: int = 0):
    """Emulator, program, entry name and packed params of an expected.toml instance."""
    emu = Emulator()
    rng = np.random.default_rng(seed)
    placement = setup(emu, kernel, inst["params"], inst["grid"], inst["block"], rng,
                      inst.get("allocations", ()))
    program = emu.load_module(module(path))
    values = param_values(expected()[kernel]["param_names"], placement.params)
    return emu, program, entry_name(path, kernel), values
