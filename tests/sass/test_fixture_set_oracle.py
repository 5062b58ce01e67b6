"""The instance verdicts of fixtures/sass/expected.toml are the truth: the emulator oracle
runs the PTX of each SASS fixture kernel (fixtures/sass/<arch>/*.ptx) on every instance of
the file, twice with exact tracing, and finds the expected verdict; where the workload has a
reference, the first run computes it."""

from __future__ import annotations

import tomllib
from dataclasses import replace
from functools import cache

import numpy as np
import pytest

from kernelcheck.emu import Emulator
from kernelcheck.emu.instances import param_values, read_buffers, setup
from kernelcheck.emu.workloads import get_workload
from kernelcheck.ir.nodes import Function
from kernelcheck.ptx.parser import parse_ptx_file
from tests.sass.conftest import FIXTURES

BUILT = FIXTURES / "sass"
SOURCES = FIXTURES / "src" / "sass"
EXPECTED = tomllib.loads((BUILT / "expected.toml").read_text())["kernels"]
#: Kernels the emulator does not run: their bulk and tensor-map copies complete on an
#: mbarrier (``mbarrier`` is not run), and warpgroup MMA (``wgmma``) is not either. Their
#: verdicts rest on the source alone.
NOT_RUN = {"bulk_copy_tiles", "tma_copy_tiles", "wgmma_tile"}

INSTANCES = [(name, k) for name, spec in EXPECTED.items() if name not in NOT_RUN
             for k in range(len(spec.get("instances", [])))]


def _arch(source: str) -> str:
    first = (SOURCES / source).read_text().splitlines()[0]
    return first.split(":", 1)[1].split()[0]


@cache
def _module(source: str, name: str):
    """The PTX module of ``source`` with ``name`` its only kernel (the emulator compiles every
    function it loads, and the other kernels of hopper.cu use what it does not run)."""
    module = parse_ptx_file(BUILT / _arch(source) / source.replace(".cu", ".ptx"))
    items = tuple(i for i in module.items if type(i) is not Function or i.name == name
                  or not i.is_kernel)
    return replace(module, items=items)


def _run(name: str, instance: dict):
    spec = EXPECTED[name]
    emu = Emulator()
    placement = setup(emu, name, instance["params"], instance["grid"], instance["block"],
                      np.random.default_rng(1), instance.get("allocations", ()))
    inputs = read_buffers(emu, placement)
    program = emu.load_module(_module(spec["source"], name))
    result = emu.launch(program, name, grid=instance["grid"], block=instance["block"],
                        params=param_values(spec["param_names"], placement.params),
                        trace=True, shared_bytes=get_workload(name).shared_bytes)
    return emu, placement, inputs, result


def test_every_kernel_with_instances_has_a_workload():
    for name, spec in EXPECTED.items():
        if spec.get("instances"):
            assert get_workload(name).kernel == name


@pytest.mark.parametrize(("name", "number"), INSTANCES, ids=lambda v: str(v))
def test_oracle_agrees_with_the_expected_verdict(name, number):
    instance = EXPECTED[name]["instances"][number]
    emu, placement, inputs, result = _run(name, instance)
    assert result.completed
    assert result.trace.verdict == instance["verdict"], (name, instance,
                                                          result.trace.reasons)
    workload = get_workload(name)
    if number == 0 and workload.reference is not None:
        grid = tuple(instance["grid"]) + (1,) * (3 - len(instance["grid"]))
        block = tuple(instance["block"]) + (1,) * (3 - len(instance["block"]))
        want = workload.reference(inputs, placement.params, grid, block)
        got = read_buffers(emu, placement)
        for key, value in want.items():
            assert np.allclose(got[key], value, rtol=workload.rtol, atol=workload.atol), key
