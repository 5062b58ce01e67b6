"""Dynamic instruction counts per thread: the profile a fault campaign draws from.

:func:`profile_launch` runs a launch (a golden run) with every plain instruction counted per
thread (:mod:`kernelcheck.emu.faults_hooks`). Counts agree with the occurrence numbering of
:class:`kernelcheck.emu.executor.BitFlip`: the ``k``-th time thread ``t`` executes
instruction ``i`` (guard true) is occurrence ``k`` of ``(i, t)``, so drawing a dynamic
instruction uniformly is drawing an integer below :meth:`DynamicProfile.total` and locating
it with :meth:`DynamicProfile.locate`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kernelcheck.emu.emulator import Emulator, LaunchResult, Program
from kernelcheck.emu.faults_hooks import instrument, lane_threads

__all__ = ["DynamicProfile", "DynamicInstance", "profile_launch"]


@dataclass(frozen=True, slots=True)
class DynamicInstance:
    """One dynamic instruction: function, instruction index, thread and occurrence (1-based)."""

    function: str
    instruction: int
    ctaid: tuple[int, int, int]
    tid: tuple[int, int, int]
    occurrence: int


@dataclass(frozen=True, slots=True)
class DynamicProfile:
    """Per-thread execution counts of every plain instruction of one launch.

    ``entries`` holds ``(function, instruction_index, counts)`` with ``counts[t]`` the
    executions by linear grid thread ``t``.
    """

    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    entries: tuple[tuple[str, int, np.ndarray], ...]

    def count(self, function: str, instruction: int) -> int:
        """Dynamic executions of one static instruction, all threads together."""
        for f, i, c in self.entries:
            if f == function and i == instruction:
                return int(c.sum())
        return 0

    def total(self, keys=None) -> int:
        """Dynamic executions of the instructions ``keys`` (every instruction by default)."""
        return sum(int(c.sum()) for f, i, c in self.entries
                   if keys is None or (f, i) in keys)

    def locate(self, k: int, keys=None) -> DynamicInstance:
        """The ``k``-th dynamic execution (0-based) among the instructions ``keys``.

        Executions are ordered by instruction (as in ``entries``), then thread, then
        occurrence, so a uniform ``k`` is a uniform dynamic instruction.
        """
        if k < 0:
            raise IndexError(k)
        for f, i, c in self.entries:
            if keys is not None and (f, i) not in keys:
                continue
            n = int(c.sum())
            if k >= n:
                k -= n
                continue
            cum = np.cumsum(c)
            t = int(np.searchsorted(cum, k, side="right"))
            before = int(cum[t - 1]) if t else 0
            bx, by, bz = self.block
            gx, gy, _ = self.grid
            threads = bx * by * bz
            b, lin = divmod(t, threads)
            ctaid = (b % gx, (b // gx) % gy, b // (gx * gy))
            tid = (lin % bx, (lin // bx) % by, lin // (bx * by))
            return DynamicInstance(f, i, ctaid, tid, k - before + 1)
        raise IndexError("dynamic instruction index past the profile")


def profile_launch(emu: Emulator, program: Program, kernel: str, **launch) -> tuple[
        DynamicProfile, LaunchResult]:
    """Run a launch with per-thread instruction counting; returns the profile and result.

    ``launch`` holds the keyword arguments of :meth:`Emulator.launch` (``grid``, ``block``,
    ``params``, ...).
    """
    grid = tuple(launch["grid"]) + (1,) * (3 - len(launch["grid"]))
    block = tuple(launch["block"]) + (1,) * (3 - len(launch["block"]))
    threads = grid[0] * grid[1] * grid[2] * block[0] * block[1] * block[2]
    counts: dict[tuple[str, int], np.ndarray] = {}

    def hook(function, index, batch, frame, lanes):
        ids = lane_threads(batch)[lanes]
        ids = ids[ids >= 0]
        if len(ids):
            c = counts.get((function, index))
            if c is None:
                c = counts[(function, index)] = np.zeros(threads, dtype=np.int64)
            c[ids] += 1

    with instrument(program, hook):
        result = emu.launch(program, kernel, **launch)
    entries = tuple((f, i, counts[(f, i)]) for f, i in sorted(counts))
    return DynamicProfile(grid, block, entries), result
