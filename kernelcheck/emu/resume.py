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
    """The state of one block saved at a region boundary.

    ``frames`` is the call stack, outermost (the kernel) first; it has more than one frame
    for a boundary inside a device function. ``site`` is the boundary
    (``call_path + (position,)``).
    """

    block: int
    position: int
    steps: int
    frames: tuple[FrameState, ...]
    shared: np.ndarray
    local: np.ndarray
    site: tuple[int, ...] = ()

    @property
    def frame(self) -> FrameState:
        """The innermost frame (where the boundary is)."""
        return self.frames[-1]

    @property
    def register_bytes(self) -> int:
        """Bytes of register state saved (all lanes, all frames)."""
        return sum(v.nbytes for f in self.frames for _, v in f.registers)


class CheckpointRecorder:
    """The executor's checkpoint hook: saves a block's state at region boundaries.

    ``last`` is the latest save (``None`` before the first boundary: the block then resumes
    from its start, the entry region); ``missed`` the boundary site reached since then with
    lanes that may touch global memory standing elsewhere (``None`` if none).
    """

    def __init__(self, regions: KernelRegions, cfunc, block: int) -> None:
        self.block = block
        self._at: dict[tuple[int, ...], set[int]] = {}
        self._enters: set[tuple[int, ...]] = set()
        for site in regions.sites:
            self._at.setdefault(site[:-1], set()).add(site[-1])
            self._enters.update(site[:k] for k in range(1, len(site)))
        self._inert_sites = regions.inert
        self._inert: dict[tuple[int, ...], np.ndarray] = {}
        self._frames = {b.site: b.frames or ((regions.kernel, b.live_registers),)
                        for b in regions.boundaries}
        self._slots: dict[tuple, tuple[int, ...]] = {}
        self._after_atomic = {b.site for b in regions.boundaries if b.after_atomic is not None}
        accesses = {a.site: a for a in _clobber_accesses(regions)}
        self._reads: dict[tuple[int, ...], frozenset] = {}
        self._writes: dict[tuple[int, ...], frozenset] = {}
        for region in regions.regions:
            inside = [accesses[s] for s in region.sites if s in accesses]
            self._reads[region.start_site] = frozenset(
                a.site for a in inside if a.kind == "read" or a.non_idempotent)
            self._writes[region.start_site] = frozenset(
                a.site for a in inside if a.kind in ("write", "atomic"))
        self._pairs = frozenset((c.read.site, c.write.site) for c in regions.clobbers)
        self.positions = frozenset(self._at.get((), ()))
        self.last: BlockCheckpoint | None = None
        self.missed: tuple[int, ...] | None = None
        self.saves = 0
        #: Saves taken with lanes at more than one boundary (the rendezvous).
        self.split_saves = 0

    def positions_at(self, path: tuple[int, ...]):
        """The boundary positions of the frame with call path ``path``."""
        return self._at.get(path, ())

    def enters(self, path: tuple[int, ...]) -> bool:
        """Whether the call with this path (or a call inside it) holds a boundary."""
        return path in self._enters

    def inert_at(self, path: tuple[int, ...], pc: int) -> bool:
        """Whether no global access is reachable from instruction ``pc`` of that frame."""
        return path + (pc,) in self._inert_sites

    def waiting(self, site: tuple[int, ...]) -> None:
        """Lanes wait at boundary ``site`` while others run up to theirs (the executor's
        rendezvous). Lanes waiting right after a non-idempotent atomic have completed it
        since the last save: until the next save, a resume would repeat it."""
        if site in self._after_atomic:
            self.missed = site

    def _disjoint(self, starts) -> bool:
        """Whether the windows of these region starts, together, hold no clobber pair."""
        reads = frozenset().union(*(self._reads.get(s, ()) for s in starts))
        writes = frozenset().union(*(self._writes.get(s, ()) for s in starts))
        return not any(r in reads and w in writes for r, w in self._pairs)

    def _inert_pcs(self, path: tuple[int, ...], cfunc, pcs: np.ndarray) -> bool:
        table = self._inert.get(path)
        if table is None:
            n = len(cfunc.ops)
            table = np.zeros(n + 1, dtype=bool)
            table[n] = path == ()  # past the kernel's last instruction: finished
            for site in self._inert_sites:
                if site[:-1] == path and site[-1] < n:
                    table[site[-1]] = True
            self._inert[path] = table
        return bool(table[np.clip(pcs, 0, len(table) - 1)].all())

    def _live(self, site, level: int, cfunc) -> tuple[int, ...]:
        key = (site, level)
        if key not in self._slots:
            names = self._frames[site][level][1]
            self._slots[key] = tuple(sorted(cfunc.reg_index[r] for r in names
                                            if r in cfunc.reg_index))
        return self._slots[key]

    def _sound(self, batch: Batch, frame, pc: int, lane_pc, active, exited, path) -> bool:
        """Whether every lane that may still touch global memory stands at this boundary."""
        if lane_pc is not None:
            elsewhere = np.unique(lane_pc[active & (lane_pc != pc)])
            here = self.positions_at(path)
            at = [int(q) for q in elsewhere if int(q) in here]
            rest = np.array([q for q in elsewhere if int(q) not in here], dtype=np.int64)
            if not self._inert_pcs(path, frame.cfunc, rest):
                return False
            # Lanes at other boundaries (the rendezvous): sound when the windows of every
            # occupied boundary, run in any interleaving, hold no clobber together.
            if at and (path or not self._disjoint([path + (pc,)] + [path + (q,) for q in at])):
                return False
        stack = batch.call_stack
        for k, ctx in enumerate(stack):
            # Lanes of a calling frame outside the call, and lanes that already returned
            # from it, continue in that frame (after the call for those that were at it).
            inner_active, inner_exited = ((stack[k + 1].active, stack[k + 1].exited)
                                          if k + 1 < len(stack) else (active, exited))
            waiting = (ctx.active & ~ctx.calling) | (ctx.calling & ~inner_active
                                                     & ~inner_exited)
            if not waiting.any():
                continue
            pcs = np.full(batch.L, ctx.pc + 1) if ctx.lane_pc is None else np.where(
                ctx.lane_pc == ctx.pc, ctx.pc + 1, ctx.lane_pc)
            if not self._inert_pcs(ctx.path, ctx.frame.cfunc, pcs[waiting]):
                return False
        return True

    def at_boundary(self, batch: Batch, frame, pc: int, lane_pc, active, exited,
                    path: tuple[int, ...] = ()) -> None:
        """Save the block's state before ``pc`` of the frame at ``path`` executes."""
        site = path + (pc,)
        if not self._sound(batch, frame, pc, lane_pc, active, exited, path):
            self.missed = site
            return
        states = []
        stack = batch.call_stack
        for k, ctx in enumerate(stack):
            # Lanes parked in a calling frame away from the call (at inert points) resume
            # there with whatever registers they had: save every register of that frame,
            # since liveness at the boundary says nothing about their positions.
            inner_active = stack[k + 1].active if k + 1 < len(stack) else active
            inner_exited = stack[k + 1].exited if k + 1 < len(stack) else exited
            parked = (ctx.active & ~ctx.calling) | (ctx.calling & ~inner_active
                                                    & ~inner_exited)
            kept = range(len(ctx.frame.regs)) if parked.any() else self._live(
                site, k, ctx.frame.cfunc)
            states.append(FrameState(
                ctx.pc, None if ctx.lane_pc is None else ctx.lane_pc.copy(), ctx.active.copy(),
                ctx.exited.copy(),
                tuple((s, ctx.frame.regs[s].copy()) for s in kept),
                tuple((n, v.copy()) for n, v in ctx.frame.params.items()),
                ctx.calling.copy()))
        level = len(states)
        slots = set(self._live(site, level, frame.cfunc))
        if lane_pc is not None:
            for q in np.unique(lane_pc[active]):
                other = path + (int(q),)
                if other == site:
                    continue
                if other in self._frames:
                    # Lanes at other boundaries (a rendezvous) need the registers live there.
                    slots.update(self._live(other, level, frame.cfunc))
                else:
                    # Lanes parked at an inert point need theirs too: keep every register.
                    slots.update(range(len(frame.regs)))
                    break
        states.append(FrameState(
            pc, None if lane_pc is None else lane_pc.copy(), active.copy(), exited.copy(),
            tuple((s, frame.regs[s].copy()) for s in sorted(slots)),
            tuple((n, v.copy()) for n, v in frame.params.items())))
        self.last = BlockCheckpoint(self.block, pc, batch.steps, tuple(states),
                                    batch.shared.copy(), batch.local.copy(), site)
        self.missed = None
        self.saves += 1
        if lane_pc is not None and len(self.positions_at(path) & set(
                lane_pc[active].tolist())) > 1:
            self.split_saves += 1


def _clobber_accesses(regions: KernelRegions) -> tuple:
    """The global accesses named by the clobbers of ``regions`` (reads and writes)."""
    seen = {}
    for c in regions.clobbers:
        seen[c.read.site] = c.read
        seen[c.write.site] = c.write
    return tuple(seen.values())


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
        where = "/".join(f"#{i}" for i in recorder.missed)
        raise ResumeError(f"{kernel}: block {recorder.block} reached the boundary before "
                          f"{where} while threads that may still access global "
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
            run_kernel(batch, cf, start=saved.frames)
    return BlockRun(True, batch.steps, again)


@dataclass(frozen=True, slots=True)
class ResumeOutcome:
    """An interrupt-and-resume run: where it stopped, where it resumed, and the match."""

    block: int
    steps: int
    resumed_at: int | None
    matches: bool
    differing_bytes: int
    resumed_site: tuple[int, ...] | None = None


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
              block: Sequence[int], params, shared_bytes: int = 0,
              regions: KernelRegions | None = None) -> dict:
    """The memory snapshot after a clean run, blocks one at a time in linear order.

    With ``regions``, every block runs with the checkpoint hook (uninterrupted), in the
    order the rendezvous at boundaries gives diverged lanes (see
    :mod:`kernelcheck.emu.executor`): the clean run an interrupted one is compared with.
    Racy kernels (a thread reading what another one writes, unordered) may end differently
    under another legal order. The emulator's memory is left as it was (the instance's
    initial state).
    """
    grid3 = _dims(grid)
    initial = emu.memory.snapshot()
    try:
        for b in range(grid3[0] * grid3[1] * grid3[2]):
            if regions is None:
                emu.launch(program, kernel, grid=grid, block=block, params=params,
                           shared_bytes=shared_bytes, blocks=[b])
            else:
                run_block(emu, program, kernel, regions, b, grid=grid, block=block,
                          params=params, shared_bytes=shared_bytes)
        return emu.memory.snapshot()
    finally:
        emu.memory.restore(initial)


def interrupt_and_resume(emu: Emulator, program: Program, kernel: str,
                         regions: KernelRegions, *, grid: Sequence[int],
                         block: Sequence[int], params, shared_bytes: int = 0,
                         block_id: int, steps: int, clean: dict | None = None
                         ) -> ResumeOutcome:
    """Run an instance interrupted in ``block_id`` after ``steps`` steps, resumed, vs clean.

    The emulator's memory must hold the instance's initial state; it is left so. Every
    block runs with the checkpoint hook. ``clean`` is the memory snapshot of
    :func:`clean_run` with ``regions``; it is computed when not given.

    Raises
    ------
    ResumeError
        See :func:`resume_block`.
    """
    grid3 = _dims(grid)
    nblocks = grid3[0] * grid3[1] * grid3[2]
    initial = emu.memory.snapshot()

    def launch_one(b: int) -> None:
        run_block(emu, program, kernel, regions, b, grid=grid, block=block, params=params,
                  shared_bytes=shared_bytes)

    if clean is None:
        clean = clean_run(emu, program, kernel, grid=grid, block=block, params=params,
                          shared_bytes=shared_bytes, regions=regions)
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
    resumed = None if stopped.completed or saved is None else saved
    return ResumeOutcome(block_id, steps, None if resumed is None else resumed.site[0],
                         differing == 0, differing, None if resumed is None else resumed.site)
