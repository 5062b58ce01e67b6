"""Resume an interrupted thread block from its last region boundary.

A block runs with a :class:`CheckpointRecorder` attached (the executor's checkpoint hook).
At each region boundary of :func:`kernelcheck.regions.kernel_regions` the recorder saves what a
resume needs (docs/regions.md): the live registers of every lane at that boundary (only the
live ones: liveness is put to the test), each lane's position and exit state, the block's
shared memory and the lanes' local memory. When the block is interrupted (``step_limit``, a
fault), :func:`resume_block` runs it again from the last save, on the global memory the
interrupted run left.

A save is only sound when every lane that may still touch global memory stands at the
boundary (lanes at an *inert* instruction, from which no global access is reachable, may
stand elsewhere; their positions are saved too). A boundary reached otherwise is *missed*:
from then until the next save the block has no sound resume point, and :func:`resume_block`
raises :class:`ResumeError` instead of guessing.

:func:`interrupt_and_resume` plays the whole scenario for one instance: blocks before the
interrupted one complete, the interrupted block stops after a number of steps and resumes,
later blocks run from their start; blocks run one at a time, in linear order, as in the clean
run it is compared with.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kernelcheck.emu.emulator import Emulator, Program, pack_params
from kernelcheck.emu.executor import Batch, FrameState, StepLimitReached, run_kernel
from kernelcheck.errors import KernelcheckError
from kernelcheck.regions.build import KernelRegions

__all__ = ["ResumeError", "BlockCheckpoint", "CheckpointRecorder", "BlockRun",
           "run_block", "resume_block", "ResumeOutcome", "clean_run", "interrupt_and_resume"]


class ResumeError(KernelcheckError):
    """No sound resume point: the regions are not clobber-free, or a save was missed."""


@dataclass(frozen=True, slots=True)
class BlockCheckpoint:
    """The state of one block saved at a region boundary."""

    block: int
    position: int
    steps: int
    frame: FrameState
    shared: np.ndarray
    local: np.ndarray

    @property
    def register_bytes(self) -> int:
        """Bytes of register state saved (all lanes)."""
        return sum(v.nbytes for _, v in self.frame.registers)


class CheckpointRecorder:
    """The executor's checkpoint hook: saves a block's state at region boundaries.

    ``last`` is the latest save (``None`` before the first boundary: the block then resumes
    from its start, the entry region); ``missed`` the boundary reached since then with lanes
    that may touch global memory standing elsewhere (``None`` if none).
    """

    def __init__(self, regions: KernelRegions, cfunc, block: int) -> None:
        self.positions = frozenset(regions.positions)
        self.block = block
        n = len(cfunc.ops)
        self._inert = np.zeros(n + 1, dtype=bool)
        self._inert[n] = True
        for i in regions.inert:
            if i < n:
                self._inert[i] = True
        slots = cfunc.reg_index
        self._live: dict[int, tuple[int, ...]] = {
            b.position: tuple(sorted(slots[r] for r in b.live_registers if r in slots))
            for b in regions.boundaries}
        self.last: BlockCheckpoint | None = None
        self.missed: int | None = None
        self.saves = 0

    def at_boundary(self, batch: Batch, frame, pc: int, lane_pc, active, exited) -> None:
        """Save the block's state before ``pc`` executes (called by the executor)."""
        if lane_pc is not None:
            elsewhere = active & (lane_pc != pc)
            if not self._inert[np.clip(lane_pc[elsewhere], 0, len(self._inert) - 1)].all():
                self.missed = pc
                return
        registers = tuple((slot, frame.regs[slot].copy()) for slot in self._live[pc])
        state = FrameState(pc, None if lane_pc is None else lane_pc.copy(), active.copy(),
                           exited.copy(), registers)
        self.last = BlockCheckpoint(self.block, pc, batch.steps, state, batch.shared.copy(),
                                    batch.local.copy())
        self.missed = None
        self.saves += 1


@dataclass(frozen=True, slots=True)
class BlockRun:
    """One block run with checkpoints: whether it completed, and its recorder."""

    completed: bool
    steps: int
    recorder: CheckpointRecorder


def _dims(d) -> tuple[int, int, int]:
    t = tuple(int(x) for x in d)
    return t + (1,) * (3 - len(t))


def _batch(emu: Emulator, program: Program, kernel: str, block_id: int, grid, block, params,
           shared_bytes: int) -> tuple[Batch, object]:
    cf = program.function(kernel)
    grid3, block3 = _dims(grid), _dims(block)
    gx, gy = grid3[0], grid3[1]
    coords = (block_id % gx, (block_id // gx) % gy, block_id // (gx * gy))
    program.kernel_name = kernel
    batch = Batch(blocks=[coords], block=block3, grid=grid3, memory=emu.memory,
                  params=pack_params(cf.function, params),
                  shared_size=program.static_shared + shared_bytes,
                  dynamic_shared=shared_bytes, local_size=program.local_size, trace=None,
                  program=program)
    return batch, cf


def run_block(emu: Emulator, program: Program, kernel: str, regions: KernelRegions,
              block_id: int, *, grid: Sequence[int], block: Sequence[int], params,
              shared_bytes: int = 0, step_limit: int | None = None) -> BlockRun:
    """Run block ``block_id`` of an instance, saving its state at every region boundary.

    Parameters
    ----------
    emu, program, kernel, grid, block, params, shared_bytes
        The instance, as for :meth:`Emulator.launch`.
    regions : KernelRegions
        The kernel's regions (:func:`kernelcheck.regions.kernel_regions`).
    block_id : int
        Linear block id (x fastest).
    step_limit : int, optional
        Interrupt the block after this many instruction steps.

    Returns
    -------
    BlockRun
    """
    batch, cf = _batch(emu, program, kernel, block_id, grid, block, params, shared_bytes)
    recorder = CheckpointRecorder(regions, cf, block_id)
    batch.checkpoint = recorder
    batch.step_limit = step_limit
    with np.errstate(all="ignore"):
        try:
            run_kernel(batch, cf)
        except StepLimitReached:
            return BlockRun(False, batch.steps, recorder)
    return BlockRun(True, batch.steps, recorder)


def resume_block(emu: Emulator, program: Program, kernel: str, regions: KernelRegions,
                 interrupted: BlockRun, *, grid: Sequence[int], block: Sequence[int], params,
                 shared_bytes: int = 0) -> BlockRun:
    """Finish an interrupted block from its last saved boundary.

    With no save yet, the block runs again from its start (the entry region, which holds
    no clobber). The resumed run keeps saving at boundaries.

    Raises
    ------
    ResumeError
        When the regions are not all clobber-free, or a boundary was missed after the last
        save (see the module documentation).
    """
    if not regions.resumable:
        raise ResumeError(f"{kernel}: regions are {regions.status} ({regions.reason}); "
                          "no region boundary is a sound resume point")
    recorder = interrupted.recorder
    if recorder.missed is not None:
        raise ResumeError(f"{kernel}: block {recorder.block} reached the boundary before "
                          f"#{recorder.missed} while threads that may still access global "
                          "memory stood elsewhere; no sound resume point since the last save")
    batch, cf = _batch(emu, program, kernel, recorder.block, grid, block, params,
                       shared_bytes)
    again = CheckpointRecorder(regions, cf, recorder.block)
    batch.checkpoint = again
    saved = recorder.last
    with np.errstate(all="ignore"):
        if saved is None:
            run_kernel(batch, cf)
        else:
            batch.shared[:] = saved.shared
            batch.local[:] = saved.local
            batch.steps = saved.steps
            run_kernel(batch, cf, start=saved.frame)
    return BlockRun(True, batch.steps, again)


@dataclass(frozen=True, slots=True)
class ResumeOutcome:
    """An interrupt-and-resume run: where it stopped, where it resumed, and the match."""

    block: int
    steps: int
    resumed_at: int | None
    matches: bool
    differing_bytes: int


def _differing(a: dict, b: dict) -> int:
    count = 0
    for base, data in a.items():
        other = b.get(base, b"")
        if other != data:
            x, y = np.frombuffer(data, np.uint8), np.frombuffer(other, np.uint8)
            n = min(len(x), len(y))
            count += int(np.count_nonzero(x[:n] != y[:n])) + abs(len(x) - len(y))
    return count


def clean_run(emu: Emulator, program: Program, kernel: str, *, grid: Sequence[int],
              block: Sequence[int], params, shared_bytes: int = 0) -> dict:
    """The memory snapshot after a clean run, blocks one at a time in linear order.

    The emulator's memory is left as it was (the instance's initial state).
    """
    grid3 = _dims(grid)
    initial = emu.memory.snapshot()
    try:
        for b in range(grid3[0] * grid3[1] * grid3[2]):
            emu.launch(program, kernel, grid=grid, block=block, params=params,
                       shared_bytes=shared_bytes, blocks=[b])
        return emu.memory.snapshot()
    finally:
        emu.memory.restore(initial)


def interrupt_and_resume(emu: Emulator, program: Program, kernel: str,
                         regions: KernelRegions, *, grid: Sequence[int],
                         block: Sequence[int], params, shared_bytes: int = 0,
                         block_id: int, steps: int, clean: dict | None = None
                         ) -> ResumeOutcome:
    """Run an instance interrupted in ``block_id`` after ``steps`` steps, resumed, vs clean.

    The emulator's memory must hold the instance's initial state; it is left so. ``clean``
    is the memory snapshot of a clean run (blocks one at a time, in linear order); it is
    computed when not given.

    Raises
    ------
    ResumeError
        See :func:`resume_block`.
    """
    grid3 = _dims(grid)
    nblocks = grid3[0] * grid3[1] * grid3[2]
    initial = emu.memory.snapshot()

    def launch_one(b: int) -> None:
        emu.launch(program, kernel, grid=grid, block=block, params=params,
                   shared_bytes=shared_bytes, blocks=[b])

    if clean is None:
        clean = clean_run(emu, program, kernel, grid=grid, block=block, params=params,
                          shared_bytes=shared_bytes)
    try:
        for b in range(block_id):
            launch_one(b)
        stopped = run_block(emu, program, kernel, regions, block_id, grid=grid, block=block,
                            params=params, shared_bytes=shared_bytes, step_limit=steps)
        saved = stopped.recorder.last
        if not stopped.completed:
            resume_block(emu, program, kernel, regions, stopped, grid=grid, block=block,
                         params=params, shared_bytes=shared_bytes)
        for b in range(block_id + 1, nblocks):
            launch_one(b)
        after = emu.memory.snapshot()
    finally:
        emu.memory.restore(initial)
    differing = _differing(clean, after)
    resumed_at = None if stopped.completed or saved is None else saved.position
    return ResumeOutcome(block_id, steps, resumed_at, differing == 0, differing)
