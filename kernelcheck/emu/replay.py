"""Replay check: interrupt an instance part way, run it again in full, compare with a clean run.

This is the definition of an idempotent instance put to the test. An *interruption point* is a
subset of the instance's blocks that completed plus one block stopped after a number of
instruction steps (its global writes so far are visible, as on a GPU killed mid-kernel). The
check restores the initial memory, runs to the interruption point, re-runs the whole instance
on the memory it left, and compares every allocation with the result of one clean run.

For an instance the oracle calls idempotent, every interruption point must replay to the clean
result; for the others a divergence is evidence (not every interruption point shows one).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kernelcheck.emu.emulator import Emulator, Program
from kernelcheck.errors import KernelcheckError

__all__ = ["InterruptionPoint", "ReplayReport", "replay_check", "run_interrupted"]


@dataclass(frozen=True, slots=True)
class InterruptionPoint:
    """Blocks completed (linear ids), the partially run block and its step count."""

    completed: tuple[int, ...]
    partial_block: int | None
    steps: int


@dataclass(frozen=True, slots=True)
class ReplayReport:
    """Outcome of a replay check over several interruption points."""

    trials: int
    divergences: tuple[InterruptionPoint, ...]
    differing_bytes: int

    @property
    def diverged(self) -> bool:
        return bool(self.divergences)


def _launch(emu, program, kernel, grid, block, params, shared_bytes, **kw):
    return emu.launch(program, kernel, grid=grid, block=block, params=params,
                      shared_bytes=shared_bytes, **kw)


def run_interrupted(emu: Emulator, program: Program, kernel: str, point: InterruptionPoint, *,
                    grid, block, params, shared_bytes: int = 0) -> None:
    """Execute the instance up to ``point`` on the emulator's current memory."""
    if point.completed:
        _launch(emu, program, kernel, grid, block, params, shared_bytes,
                blocks=point.completed)
    if point.partial_block is not None and point.steps > 0:
        _launch(emu, program, kernel, grid, block, params, shared_bytes,
                blocks=[point.partial_block], step_limit=point.steps)


def _differing(a: dict[int, bytes], b: dict[int, bytes]) -> int:
    count = 0
    for base, data in a.items():
        other = b.get(base)
        if other != data:
            x = np.frombuffer(data, np.uint8)
            y = np.frombuffer(other or b"", np.uint8)
            n = min(len(x), len(y))
            count += int(np.count_nonzero(x[:n] != y[:n])) + abs(len(x) - len(y))
    return count


def replay_check(emu: Emulator, program: Program, kernel: str, *, grid: Sequence[int],
                 block: Sequence[int], params, shared_bytes: int = 0, trials: int = 8,
                 rng: np.random.Generator | None = None) -> ReplayReport:
    """Replay ``trials`` random interruption points of an instance.

    The emulator's memory must hold the instance's initial state; it is restored between
    trials and left as the clean run leaves it.

    Parameters
    ----------
    emu, program, kernel, grid, block, params, shared_bytes
        The instance, as for :meth:`Emulator.launch`.
    trials : int
        Random interruption points to try.
    rng : numpy.random.Generator, optional
        Source of randomness (seeded generator for reproducible runs).

    Returns
    -------
    ReplayReport
    """
    rng = rng or np.random.default_rng(0)
    grid3 = tuple(grid) + (1,) * (3 - len(grid))
    nblocks = grid3[0] * grid3[1] * grid3[2]
    initial = emu.memory.snapshot()
    _launch(emu, program, kernel, grid, block, params, shared_bytes)
    clean = emu.memory.snapshot()
    block_steps: dict[int, int] = {}
    divergences = []
    differing = 0
    for _ in range(trials):
        order = rng.permutation(nblocks)
        done = int(rng.integers(0, nblocks)) if nblocks > 1 else 0
        partial = int(order[done]) if done < nblocks else None
        if partial is not None and partial not in block_steps:
            emu.memory.restore(initial)
            res = _launch(emu, program, kernel, grid, block, params, shared_bytes,
                          blocks=[partial])
            block_steps[partial] = res.steps
        steps = int(rng.integers(1, block_steps[partial] + 1)) if partial is not None else 0
        point = InterruptionPoint(tuple(int(b) for b in order[:done]), partial, steps)
        emu.memory.restore(initial)
        run_interrupted(emu, program, kernel, point, grid=grid, block=block, params=params,
                        shared_bytes=shared_bytes)
        try:
            _launch(emu, program, kernel, grid, block, params, shared_bytes)
        except KernelcheckError:
            # The re-run read state the interrupted run changed and failed: a divergence.
            divergences.append(point)
            continue
        after = emu.memory.snapshot()
        if after != clean:
            divergences.append(point)
            differing = max(differing, _differing(clean, after))
    emu.memory.restore(clean)
    return ReplayReport(trials, tuple(divergences), differing)
