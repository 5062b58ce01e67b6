"""Interrupt a block anywhere, resume it from its last region boundary: the result is the clean
run's, for every non-idempotent fixture kernel; and resuming without the boundaries is not."""

from __future__ import annotations

import dataclasses
import os

import numpy as np
import pytest

from kernelcheck.emu.resume import ResumeError, clean_run, interrupt_and_resume, run_block
from kernelcheck.emu.workloads import get_workload
from kernelcheck.regions import kernel_regions
from tests.emu.fixture_data import expected, module, prepare, ptx_files

#: Random interruption points per kernel and flavour; KERNELCHECK_RESUME_TRIALS=200 for a
#: larger run.
TRIALS = int(os.environ.get("KERNELCHECK_RESUME_TRIALS", "12"))

CASES = [(kernel, path)
         for kernel, spec in expected().items()
         if spec["class"] in ("never", "conditional")
         and any(i["verdict"] == "not_idempotent" for i in spec["instances"])
         for path in ptx_files(kernel) if path.parent.name in ("sm_80", "sm_90")]


def _setup(kernel, path):
    inst = next(i for i in expected()[kernel]["instances"] if i["verdict"] == "not_idempotent")
    emu, program, name, values = prepare(kernel, path, inst)
    regions = kernel_regions(module(path), module(path).get_function(name))
    return emu, program, name, values, regions, inst


def _steps(emu, program, name, values, regions, inst, shared, b):
    initial = emu.memory.snapshot()
    total = run_block(emu, program, name, regions, b, grid=inst["grid"], block=inst["block"],
                      params=values, shared_bytes=shared).steps
    emu.memory.restore(initial)
    return total


def _trials(emu, program, name, values, regions, inst, shared, seed, trials=TRIALS,
            points=None):
    """Interrupt at ``points`` ((block, steps) pairs), or at ``trials`` random ones."""
    grid, block = inst["grid"], inst["block"]
    nblocks = int(np.prod(grid))
    rng = np.random.default_rng(seed)
    if points is None:
        totals = {}
        points = []
        for _ in range(trials):
            b = int(rng.integers(0, nblocks))
            if b not in totals:
                totals[b] = _steps(emu, program, name, values, regions, inst, shared, b)
            points.append((b, int(rng.integers(1, totals[b] + 1))))
    clean = clean_run(emu, program, name, grid=grid, block=block, params=values,
                      shared_bytes=shared, regions=regions)
    outcomes, refused = [], []
    for b, steps in points:
        try:
            outcomes.append(interrupt_and_resume(
                emu, program, name, regions, grid=grid, block=block, params=values,
                shared_bytes=shared, block_id=b, steps=steps, clean=clean))
        except ResumeError as error:
            refused.append(str(error))
    return outcomes, refused


@pytest.mark.parametrize("kernel,path", CASES,
                         ids=[f"{p.parent.name}-{k[:40]}" for k, p in CASES])
def test_resume_from_the_last_boundary_matches_the_clean_run(kernel, path):
    emu, program, name, values, regions, inst = _setup(kernel, path)
    shared = get_workload(kernel).shared_bytes
    outcomes, refused = _trials(emu, program, name, values, regions, inst, shared,
                                seed=len(kernel))
    mismatched = [o for o in outcomes if not o.matches]
    assert mismatched == []
    assert regions.resumable
    # ResumeError stays the safety net; on the fixtures it never fires.
    assert refused == []


def test_resumed_blocks_really_restart_from_a_boundary():
    emu, program, name, values, regions, inst = _setup(
        "inplace_add_one", ptx_files("inplace_add_one")[0])
    outcomes, _ = _trials(emu, program, name, values, regions, inst, 0, seed=3, trials=20)
    assert {o.resumed_at for o in outcomes} & set(regions.positions)


SMALL = ["inplace_add_one", "atomic_add_all", "shift_scale", "atomic_inc_ticket",
         "histogram256_shared", "jacobi_pingpong", "scan_block_inclusive",
         "noinline_accumulate"]


@pytest.mark.parametrize("kernel", SMALL)
def test_every_interruption_point_of_a_block_resumes(kernel):
    """Forty points spread over the steps of the first and of the last block (every step
    of the short ones)."""
    emu, program, name, values, regions, inst = _setup(kernel, ptx_files(kernel)[0])
    shared = get_workload(kernel).shared_bytes
    last = int(np.prod(inst["grid"])) - 1
    points = [(b, int(s)) for b in sorted({0, last}) for s in np.unique(np.linspace(
        1, _steps(emu, program, name, values, regions, inst, shared, b), 40).astype(int))]
    outcomes, refused = _trials(emu, program, name, values, regions, inst, shared, 0,
                                points=points)
    assert [o for o in outcomes if not o.matches] == []
    assert refused == []


@pytest.mark.parametrize("kernel", ["inplace_add_one", "atomic_add_all", "shift_scale",
                                    "noinline_accumulate"])
def test_resuming_from_the_start_instead_diverges(kernel):
    """The same harness with the boundaries removed finds the clobber: it can fail."""
    emu, program, name, values, regions, inst = _setup(kernel, ptx_files(kernel)[0])
    whole = dataclasses.replace(regions, boundaries=(), status="one_region")
    shared = get_workload(kernel).shared_bytes
    points = [(0, s) for s in range(1, _steps(emu, program, name, values, whole, inst,
                                               shared, 0) + 1)]
    outcomes, _ = _trials(emu, program, name, values, whole, inst, shared, 0, points=points)
    assert any(not o.matches for o in outcomes)


@pytest.mark.parametrize("kernel", ["noinline_accumulate", "noinline_store_scaled"])
def test_a_block_interrupted_inside_a_device_function_resumes_there(kernel):
    """The boundary sits in the callee: the saved call stack (kernel frame at the call, the
    callee's frame, both frames' .param areas) brings the block back into the callee."""
    emu, program, name, values, regions, inst = _setup(kernel, ptx_files(kernel)[0])
    (site,) = regions.sites
    assert len(site) == 2
    points = [(0, s) for s in range(1, _steps(emu, program, name, values, regions, inst, 0,
                                               0) + 1)]
    outcomes, refused = _trials(emu, program, name, values, regions, inst, 0, 0,
                                points=points)
    assert refused == [] and [o for o in outcomes if not o.matches] == []
    assert site in {o.resumed_site for o in outcomes}


def test_diverged_threads_meet_at_different_boundaries_and_save_together():
    """jacobi_pingpong: thread 0 waits before its store in one arm while the others run up
    to the boundary before theirs; the block saves with lanes at both boundaries."""
    kernel = "jacobi_pingpong"
    emu, program, name, values, regions, inst = _setup(kernel, ptx_files(kernel)[0])
    initial = emu.memory.snapshot()
    run = run_block(emu, program, name, regions, 0, grid=inst["grid"], block=inst["block"],
                    params=values)
    emu.memory.restore(initial)
    assert run.completed and run.recorder.missed is None
    assert run.recorder.split_saves >= 1
