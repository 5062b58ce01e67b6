"""Fixture kernel instances ready to run on the emulator: the targets of fault campaigns.

A :class:`Target` is one kernel instance of fixtures/expected.toml (its parameters, grid,
block and allocations), placed on a fresh emulator by the workload table
(:mod:`kernelcheck.emu.workloads`), with the initial memory kept so that every trial starts
from the same state. Instances that give pointers keep their placement (aliased and
overlapping ones are the clobbering instances); ``disjoint=True`` drops the pointers so that
every buffer gets its own allocation.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from kernelcheck.emu.emulator import Emulator, Program
from kernelcheck.emu.instances import param_values, setup
from kernelcheck.emu.workloads import get_workload
from kernelcheck.ir.nodes import Module
from kernelcheck.ptx.parser import parse_ptx_file

__all__ = ["FIXTURES", "Target", "expected_kernels", "fixture_ptx", "load_target",
           "targets_in"]

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
_FLAVOURS = ("sm_80", "sm_90", "nvrtc")


@cache
def expected_kernels(path: Path = FIXTURES / "expected.toml") -> dict:
    """The ``[kernels]`` table of fixtures/expected.toml."""
    with open(path, "rb") as f:
        return tomllib.load(f)["kernels"]


def fixture_ptx(kernel: str) -> Path:
    """The first PTX file that defines fixture ``kernel`` (nvcc sm_80 first)."""
    source = expected_kernels()[kernel]["source"]
    if source.endswith(".cu"):
        for flavour in _FLAVOURS:
            path = FIXTURES / "ptx" / flavour / f"{source[:-3]}.ptx"
            if path.exists():
                return path
    elif source.startswith("triton"):
        found = sorted((FIXTURES / "ptx" / "triton").glob(f"{kernel}_sm*.ptx"))
        if found:
            return found[0]
    else:
        for short in ("scale_numba", "increment_numba", "histogram_numba"):
            if short in kernel:
                return sorted((FIXTURES / "ptx" / "numba").glob(f"{short}_sm*.ptx"))[0]
    raise KeyError(f"no PTX file for fixture kernel {kernel}")


@cache
def _module(path: Path) -> Module:
    return parse_ptx_file(path)


def _entry(module: Module, kernel: str) -> str:
    names = [k.name for k in module.kernels]
    if kernel in names:
        return kernel
    prefix = kernel.split("B2v")[0]
    for name in names:
        if name.startswith(prefix):
            return name
    raise KeyError(f"kernel {kernel} is not in the module")


def _drop_pointers(params: dict) -> dict:
    out = {}
    for k, v in params.items():
        if isinstance(v, list):
            out[k] = [[o, s, 0 if o == 0 and s == 8 else x] for o, s, x in v]
        elif isinstance(v, int) and not isinstance(v, bool) and v >= 0x7E0000000000:
            continue
        else:
            out[k] = v
    return out


@dataclass(slots=True)
class Target:
    """One placed kernel instance: emulator, program, launch arguments and initial memory."""

    kernel: str
    entry: str
    number: int
    disjoint: bool
    emu: Emulator
    program: Program
    module: Module
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    values: list
    shared_bytes: int
    allocations: tuple[tuple[int, int], ...]
    initial: dict

    @property
    def name(self) -> str:
        return f"{self.kernel}#{self.number}{'d' if self.disjoint else ''}"

    def launch_kwargs(self) -> dict:
        """Arguments of :meth:`Emulator.launch` for this instance."""
        return {"grid": self.grid, "block": self.block, "params": self.values,
                "shared_bytes": self.shared_bytes}

    def reset(self) -> None:
        """Put the initial memory back."""
        self.emu.memory.restore(self.initial)


def load_target(kernel: str, number: int = 0, *, disjoint: bool = False,
                path: Path | None = None, seed: int = 0) -> Target:
    """Place instance ``number`` of fixture ``kernel`` on a new emulator.

    Parameters
    ----------
    kernel : str
        A kernel of fixtures/expected.toml.
    number : int
        Which of its instances.
    disjoint : bool
        Give every buffer its own allocation (drop the instance's pointers).
    path : Path, optional
        The PTX file to run (the fixture's first PTX file by default).
    seed : int
        Seed of the buffer contents.
    """
    spec = expected_kernels()[kernel]
    inst = spec["instances"][number]
    params = _drop_pointers(inst["params"]) if disjoint else dict(inst["params"])
    for name in [k for k, v in params.items() if isinstance(v, list)]:
        if all(x == 0 for o, s, x in params[name] if o == 0):
            params[name] = [[o, s, x] for o, s, x in params[name] if o != 0]
    grid = tuple(inst["grid"]) + (1,) * (3 - len(inst["grid"]))
    block = tuple(inst["block"]) + (1,) * (3 - len(inst["block"]))
    emu = Emulator()
    placed = setup(emu, kernel, params, grid, block, np.random.default_rng(seed),
                   () if disjoint else inst.get("allocations", ()))
    module = _module(path or fixture_ptx(kernel))
    program = emu.load_module(module)
    values = param_values(spec["param_names"], placed.params)
    allocations = tuple((a.base, a.size) for a in emu.memory.allocations())
    return Target(kernel, _entry(module, kernel), number, disjoint, emu, program, module,
                  grid, block, values, get_workload(kernel).shared_bytes, allocations,
                  emu.memory.snapshot())


def targets_in(path: Path) -> tuple[str, ...]:
    """Fixture kernels defined in a PTX file that have a workload."""
    from kernelcheck.ptx.parser import parse_ptx_file as parse
    names = {k.name for k in parse(path).kernels}
    out = []
    for kernel in expected_kernels():
        try:
            get_workload(kernel)
        except KeyError:
            continue
        if kernel in names or any(n.startswith(kernel.split("B2v")[0]) for n in names):
            out.append(kernel)
    return tuple(out)
