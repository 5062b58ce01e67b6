"""The SIMT execution loop: runs a batch of thread blocks over compiled instructions.

Lanes
    A batch holds one or more whole blocks; each block's threads are padded to a multiple of 32
    lanes so that warps are aligned groups of 32 lanes (padding lanes never run). Registers are
    numpy arrays with one element per lane.

Divergence and reconvergence (the *minimum-PC* scheme)
    While every running lane is at the same instruction, the batch runs it for all of them.
    After a divergent branch each lane keeps its own program counter, and the batch repeatedly
    runs the instruction with the smallest program counter for the lanes that are there. Lanes
    meet again at the first instruction every path reaches in program order, which, for the
    code nvcc, NVRTC, Triton and numba emit (forward branches to reconvergence points, loops
    with backward branches), is the immediate post-dominator, without computing it. Lanes that
    wait are never ahead of a lane that has not yet reached an instruction earlier in the
    program, so a ``bar.sync`` is only ever executed when every lane of the block that will
    reach it has done so: barriers need no extra bookkeeping, and blocks can share a batch.
    Warp-level instructions see exactly the lanes of their warp that run them together.

Calls
    ``call`` runs the callee to completion for the calling lanes in a new frame (own
    registers, per-lane ``.param`` areas), then copies its return values back.

Traps and device-side assertions
    ``trap`` executed by any lane stops the launch with :class:`LaunchError`. A ``call`` of
    ``__assertfail`` without a body (a failed ``assert``) stops it with
    :class:`DeviceAssertionError`, naming the first failing thread, its block and the
    assertion's message, file, line and function, as ``cudaErrorAssert`` aborts a launch
    on hardware; nothing after it runs.

A step budget (``step_limit``) stops a batch part way, for interrupted-execution experiments.

Checkpoints and resume (the hooks of :mod:`kernelcheck.emu.resume`)
    When ``batch.checkpoint`` is set, a frame calls its ``at_boundary`` just before it
    executes an instruction of ``checkpoint.positions_at(path)`` (for the lanes standing
    there), before that step counts against ``step_limit``: a block stopped at a boundary
    resumes there. ``path`` is the call path of the frame (the ``call`` instructions it runs
    through, the kernel's first; empty for the kernel frame). A call whose callee holds
    boundaries (``checkpoint.enters(path)``) runs with the hook, and while it runs
    ``batch.call_stack`` holds a :class:`CallSite` per calling frame, outermost first, so
    that a save inside the callee can record the whole stack.

    A boundary is a block-wide rendezvous in a diverged kernel frame: when the lowest
    program counter is a boundary while other lanes that may still touch global memory
    (``checkpoint.inert_at``) stand elsewhere, not at a boundary, those lanes run first, up
    to their own boundary, before the hook is called, so that the block saves with every
    lane at a boundary. Running them first is one of the orders the hardware may choose
    between diverged paths; lanes never run ahead over a block or warp-collective
    instruction (``bar``, ``shfl``, ``vote``, ...), where the lowest program counter runs
    as usual.
    ``run_kernel(batch, cfunc, start=state)`` runs the kernel from a saved
    :class:`FrameState` instead of from its first instruction, or from a tuple of them (a
    call stack, outermost first): the innermost frame continues, returns into its caller at
    the instruction after the call, and so on out to the kernel frame.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kernelcheck.emu.compiler import BARRIER, BRANCH, BRX, CALL, EXIT, PLAIN, RET, TRAP, where
from kernelcheck.emu.values import flip_bits
from kernelcheck.errors import KernelcheckError, UnsupportedFeature
from kernelcheck.ir.nodes import VECTOR_ELEMENTS

__all__ = ["LaunchError", "DeviceAssertionError", "Batch", "Frame", "FrameState", "CallSite",
           "StepLimitReached", "run_kernel", "BitFlip"]


class LaunchError(KernelcheckError):
    """A launch stopped by the kernel itself (``trap``) or by an impossible state."""


class DeviceAssertionError(LaunchError):
    """A device-side assertion failed (``__assertfail``): the launch stops, as
    ``cudaErrorAssert`` does on hardware.

    ``block`` and ``thread`` are the ``%ctaid`` and ``%tid`` of the first failing thread
    (lowest lane of the batch step), ``failing`` how many threads failed in that step;
    ``message``, ``file``, ``line`` and ``function`` are what the call passed (``None``
    where unreadable); ``location`` names the call instruction.
    """

    def __init__(self, kernel: str, block: tuple[int, int, int],
                 thread: tuple[int, int, int], failing: int = 1,
                 message: str | None = None, file: str | None = None,
                 line: int | None = None, function: str | None = None,
                 location: str = "") -> None:
        self.kernel = kernel
        self.block = block
        self.thread = thread
        self.failing = failing
        self.message = message
        self.file = file
        self.line = line
        self.function = function
        self.location = location
        text = f"device-side assertion failed in {kernel}: block {block}, thread {thread}"
        if failing > 1:
            text += f" (and {failing - 1} more threads)"
        if message is not None:
            text += f": Assertion `{message}` failed"
        if file is not None:
            text += f" at {file}:{line}" if line is not None else f" in {file}"
        if function:
            text += f" in {function}"
        if location:
            text += f" ({location})"
        super().__init__(text)


class StepLimitReached(Exception):
    """Internal: the batch used up its step budget."""


@dataclass(frozen=True, slots=True)
class BitFlip:
    """A fault to inject: flip ``bits`` of a destination register of one dynamic instruction.

    The flip happens right after thread ``tid`` of block ``ctaid`` executes instruction
    ``instruction`` (its index in ``function``, the kernel when ``None``) for the
    ``occurrence``-th time (1-based); ``element`` picks the destination of a vector load.
    """

    instruction: int
    ctaid: tuple[int, int, int]
    tid: tuple[int, int, int]
    bits: int = 1
    occurrence: int = 1
    function: str | None = None
    element: int = 0


#: Special registers (PTX ISA 10 "Special Registers") read per component (``.x``, ``.y``,
#: ``.z``), and those read whole.
_SPECIAL_VECTORS = frozenset({"%tid", "%ntid", "%ctaid", "%nctaid", "%cluster_ctaid",
                              "%cluster_nctaid"})
_SPECIAL_SCALARS = frozenset({"%laneid", "%warpid", "%nwarpid", "%smid", "%nsmid", "%gridid",
                              "%dynamic_smem_size", "%total_smem_size", "%is_explicit_cluster",
                              "%cluster_ctarank", "%cluster_nctarank", "%lanemask_eq",
                              "%lanemask_lt", "%lanemask_le", "%lanemask_gt", "%lanemask_ge",
                              "%clock", "%clock64", "%globaltimer", "%globaltimer_lo",
                              "%globaltimer_hi"})


def special_register_runs(name: str) -> bool:
    """Whether the emulator gives a value for the special register ``name``: a vector
    register needs one of its components ``.x``/``.y``/``.z`` (a missing or other component
    is not guessed); ``%clusterid``/``%nclusterid`` are read whole or per component."""
    base, _, component = name.partition(".")
    if base in _SPECIAL_VECTORS:
        return component in ("x", "y", "z")
    if base in ("%clusterid", "%nclusterid"):
        return component in ("", "x", "y", "z")
    return base in _SPECIAL_SCALARS and not component


class Frame:
    """Registers and per-lane ``.param`` areas of one running function."""

    __slots__ = ("cfunc", "regs", "params")

    def __init__(self, cfunc, lanes: int) -> None:
        self.cfunc = cfunc
        self.regs = [np.zeros(lanes, dtype=dt) for dt in cfunc.reg_storage]
        self.params = {name: np.zeros((lanes, max(size, 1)), dtype=np.uint8)
                       for name, size in cfunc.param_sizes.items()}


@dataclass(frozen=True, slots=True)
class FrameState:
    """Where the kernel frame of a batch stands: enough to continue it from there.

    ``registers`` maps register slots of the compiled function to their per-lane values
    (slots left out start as zeros); ``pc`` is the instruction every running lane stands at
    when ``lane_pc`` is ``None``, else ``lane_pc`` holds each lane's own program counter.
    ``params`` holds the frame's ``.param`` areas (call-scope variables, a callee's formal
    parameters). In a call stack, every frame but the innermost stands at the ``call`` at
    ``pc`` and ``calling`` names the lanes running the callee.
    """

    pc: int
    lane_pc: np.ndarray | None
    active: np.ndarray
    exited: np.ndarray
    registers: tuple[tuple[int, np.ndarray], ...]
    params: tuple[tuple[str, np.ndarray], ...] = ()
    calling: np.ndarray | None = None


class CallSite:
    """A frame waiting in a ``call`` (an entry of ``batch.call_stack``)."""

    __slots__ = ("frame", "path", "pc", "lane_pc", "active", "exited", "calling")

    def __init__(self, frame, path, pc, lane_pc, active, exited, calling) -> None:
        self.frame = frame
        self.path = path
        self.pc = pc
        self.lane_pc = lane_pc
        self.active = active
        self.exited = exited
        self.calling = calling


class Batch:
    """The state of a batch of blocks: lane geometry, special registers and memories."""

    def __init__(self, *, blocks: list[tuple[int, int, int]], block: tuple[int, int, int],
                 grid: tuple[int, int, int], memory, params: np.ndarray, shared_size: int,
                 dynamic_shared: int, local_size: int, trace, program, clock_base: int = 0,
                 flip: BitFlip | None = None) -> None:
        bx, by, bz = block
        threads = bx * by * bz
        padded = (threads + 31) // 32 * 32
        nb = len(blocks)
        self.L = L = nb * padded
        self.threads_per_block = threads
        self.padded = padded
        self.all_lanes = np.arange(L)
        slot = self.all_lanes // padded
        lin = self.all_lanes % padded
        self.block_slot = slot.astype(np.int64)
        self.alive = lin < threads
        self._tid = (lin % bx, (lin // bx) % by, lin // (bx * by))
        cta = np.asarray(blocks, dtype=np.int64).reshape(nb, 3)
        self._ctaid = tuple(cta[slot, k] for k in range(3))
        self.blocks = blocks
        self.block = block
        self.grid = grid
        self.mem = memory
        self.params = params
        self.shared_size = shared_size
        self.dynamic_shared = dynamic_shared
        self.shared = np.zeros(max(16, (nb * shared_size + 15) // 16 * 16), dtype=np.uint8)
        self.local_size = (local_size + 15) // 16 * 16
        self.local = np.zeros(max(16, L * self.local_size), dtype=np.uint8)
        self.trace = trace
        self.program = program
        self._clock = clock_base
        self._special: dict[str, object] = {}
        self.thread_instructions = 0
        self.steps = 0
        self.step_limit: int | None = None
        self.flip = flip
        self.flip_lane = -1
        self.flip_count = 0
        self.flip_done = False
        #: Checkpoint hook (see the module documentation), or None.
        self.checkpoint = None
        #: Frames waiting in a call that runs with the checkpoint hook, outermost first.
        self.call_stack: list[CallSite] = []
        if flip is not None:
            for k, c in enumerate(blocks):
                if tuple(c) == tuple(flip.ctaid):
                    tx, ty, tz = flip.tid
                    if tx < bx and ty < by and tz < bz:
                        self.flip_lane = k * padded + tx + bx * (ty + by * tz)

    # ------------------------------------------------------------------ special registers
    def special(self, name: str):
        value = self._special.get(name)
        if value is None:
            value = self._compute_special(name)
            self._special[name] = value
        return value

    def _compute_special(self, name: str):
        if not special_register_runs(name):
            raise UnsupportedFeature(f"special register {name}")
        base, _, comp = name.partition(".")
        k = "xyz".find(comp) if comp else -1
        u32 = np.uint32
        if base == "%tid":
            return self._tid[k].astype(u32)
        if base == "%ntid":
            return u32(self.block[k])
        if base == "%ctaid":
            return self._ctaid[k].astype(u32)
        if base == "%nctaid":
            return u32(self.grid[k])
        lin = self.all_lanes % self.padded
        if base == "%laneid":
            return (lin % 32).astype(u32)
        if base == "%warpid":
            return (lin // 32).astype(u32)
        if base == "%nwarpid":
            return u32(self.padded // 32)
        if base in ("%smid", "%nsmid", "%gridid"):
            return u32(0) if base != "%nsmid" else u32(1)
        if base.startswith("%lanemask_"):
            lane = (lin % 32).astype(np.uint64)
            one = np.uint64(1)
            kind = base[len("%lanemask_"):]
            table = {"eq": one << lane, "lt": (one << lane) - one,
                     "le": ((one << lane) << one) - one,
                     "gt": ~(((one << lane) << one) - one), "ge": ~((one << lane) - one)}
            return (table[kind] & np.uint64(0xFFFFFFFF)).astype(u32)
        if base in ("%dynamic_smem_size",):
            return u32(self.dynamic_shared)
        if base in ("%total_smem_size",):
            return u32(self.shared_size)
        if base in ("%is_explicit_cluster",):
            return np.bool_(False)
        if base in ("%clusterid", "%cluster_ctaid"):
            return u32(0) if base == "%clusterid" else self._ctaid[k].astype(u32)
        if base in ("%nclusterid",):
            return u32(1)
        if base in ("%cluster_nctaid",):
            return u32(self.grid[k])
        if base in ("%cluster_ctarank",):
            return u32(0)
        if base in ("%cluster_nctarank",):
            return u32(1)
        raise UnsupportedFeature(f"special register {name}")

    def clock(self, name: str):
        """A deterministic counter: advances by one per executed instruction step."""
        value = self._clock + self.steps
        if name in ("%clock", "%globaltimer_lo"):
            return np.uint32(value & 0xFFFFFFFF)
        if name == "%globaltimer_hi":
            return np.uint32(value >> 32)
        return np.uint64(value)

    def position(self, lane: int) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
        """``(ctaid, tid)`` of a lane."""
        return (tuple(int(c[lane]) for c in self._ctaid),
                tuple(int(t[lane]) for t in self._tid))


#: Opcodes a lane never runs ahead over while others wait at a boundary (they synchronise
#: or exchange data with other lanes of the warp or block).
_COLLECTIVE = frozenset({"bar", "barrier", "shfl", "vote", "match", "redux", "activemask",
                         "wmma", "mma", "ldmatrix", "stmatrix", "wgmma", "elect", "tcgen05",
                         "setmaxnreg", "griddepcontrol"})


def _ahead(hook, ops, n: int, lane_pc, active, positions, path) -> int | None:
    """The program counter to run before a boundary save, or None to save (or miss) now."""
    pcs = np.unique(lane_pc[active])
    waiting = [int(q) for q in pcs if q < n and int(q) not in positions
               and not hook.inert_at(path, q)]
    if not waiting:
        return None
    q = waiting[0]
    op = ops[q]
    if op.kind not in (PLAIN, BRANCH, EXIT, RET) or op.instr.opcode in _COLLECTIVE:
        return None
    return q


def run_kernel(batch: Batch, cfunc,
               start: FrameState | tuple[FrameState, ...] | None = None) -> None:
    """Run the kernel ``cfunc`` over every thread of ``batch``.

    ``start`` is a saved frame state of the kernel, or a call stack of them (outermost
    first) to continue from; ``None`` starts at the first instruction.
    """
    if start is None:
        _run_frame(batch, Frame(cfunc, batch.L), batch.alive.copy(), batch.checkpoint)
        return
    stack = (start,) if isinstance(start, FrameState) else tuple(start)
    _continue(batch, cfunc, stack, ())


def _restored(batch: Batch, cfunc, state: FrameState) -> Frame:
    frame = Frame(cfunc, batch.L)
    for slot, values in state.registers:
        frame.regs[slot] = values.copy()
    for name, values in state.params:
        frame.params[name][:] = values
    return frame


def _continue(batch: Batch, cfunc, stack: tuple[FrameState, ...], path: tuple[int, ...]
              ) -> tuple[Frame, np.ndarray]:
    """Continue the frames of ``stack`` (outermost first); returns the outer frame, exits."""
    state = stack[0]
    frame = _restored(batch, cfunc, state)
    hook = batch.checkpoint
    if len(stack) == 1:
        return frame, _run_frame(batch, frame, state.active.copy(), hook, state, path)
    op = cfunc.ops[state.pc]
    callee = batch.program.function(op.callee, op.instr)
    lanes = state.calling
    batch.call_stack.append(CallSite(frame, path, state.pc, state.lane_pc, state.active,
                                     state.exited, lanes))
    try:
        inner, gone = _continue(batch, callee, stack[1:], path + (state.pc,))
    finally:
        batch.call_stack.pop()
    _returned(callee, op, inner, frame, lanes)
    active = state.active & ~gone
    exited = state.exited | gone
    if state.lane_pc is None:
        after = FrameState(state.pc + 1, None, active, exited, ())
    else:
        at = state.active & (state.lane_pc == state.pc)
        after = FrameState(state.pc + 1, np.where(at, state.pc + 1, state.lane_pc), active,
                           exited, ())
    if not active.any():
        return frame, exited
    return frame, _run_frame(batch, frame, active, hook, after, path)


def _guard_mask(regs, op, base):
    g = regs[op.guard]
    if op.guard_negated:
        g = ~g
    return g if base is None else (g & base)


def _apply_flip(batch: Batch, fr: Frame, op, emask) -> None:
    flip = batch.flip
    if flip.instruction != op.instr.index or batch.flip_done:
        return
    if (flip.function or batch.program.kernel_name) != fr.cfunc.function.name:
        return
    lane = batch.flip_lane
    if lane < 0 or not (emask is None or emask[lane]):
        return
    batch.flip_count += 1
    if batch.flip_count == flip.occurrence and op.dests:
        index, _ = op.dests[min(flip.element, len(op.dests) - 1)]
        reg = fr.regs[index].copy()
        flip_bits(reg, lane, flip.bits)
        fr.regs[index] = reg
        batch.flip_done = True


def _run_frame(batch: Batch, fr: Frame, active: np.ndarray, hook=None,
               start: FrameState | None = None, path: tuple[int, ...] = ()) -> np.ndarray:
    """Run ``fr`` for lanes ``active`` until they return; returns the lanes that ``exit``.

    ``hook`` is the checkpoint hook; ``start`` a state to continue from; ``path`` the call
    path of the frame (empty for the kernel).
    """
    ops = fr.cfunc.ops
    n = len(ops)
    regs = fr.regs
    L = batch.L
    exited = np.zeros(L, dtype=bool) if start is None else start.exited.copy()
    full = bool(active.all())
    upc = 0 if start is None else (start.pc if start.lane_pc is None else None)
    lane_pc = None if start is None or start.lane_pc is None else start.lane_pc.copy()
    positions = hook.positions_at(path) if hook is not None else ()
    flip = batch.flip is not None
    limit = batch.step_limit
    while True:
        if upc is not None:
            # ---------------------------------------------------------- converged
            if upc >= n:
                break
            op = ops[upc]
            base = None if full else active
            emask = base if op.guard < 0 else _guard_mask(regs, op, base)
            kind = op.kind
            if upc in positions:
                hook.at_boundary(batch, fr, upc, None, active, exited, path)
            batch.steps += 1
            if limit is not None and batch.steps > limit:
                raise StepLimitReached
            if kind == PLAIN:
                if emask is None:
                    op.fn(batch, fr, None)
                    batch.thread_instructions += L
                else:
                    count = int(np.count_nonzero(emask))
                    if count:
                        op.fn(batch, fr, None if count == L else emask)
                        batch.thread_instructions += count
                if flip:
                    _apply_flip(batch, fr, op, emask)
                upc += 1
                continue
            batch.thread_instructions += L if emask is None else int(np.count_nonzero(emask))
            if kind == BRANCH:
                if op.guard < 0:
                    upc = op.target
                    continue
                taken = emask
                if not taken.any():
                    upc += 1
                elif np.array_equal(taken, active):
                    upc = op.target
                else:
                    lane_pc = np.where(taken, op.target, upc + 1)
                    upc = None
                continue
            if kind == BARRIER:
                upc += 1
                continue
            lanes = active if emask is None else emask
            if kind in (EXIT, RET):
                if kind == EXIT:
                    exited |= lanes
                active = active & ~lanes
                full = False
                if not active.any():
                    break
                upc += 1
                continue
            if kind == CALL:
                if lanes.any():
                    gone = _call(batch, fr, op, lanes.copy(), hook, path,
                                 (upc, None, active, exited))
                    if gone.any():
                        exited |= gone
                        active = active & ~gone
                        full = bool(active.all())
                        if not active.any():
                            break
                upc += 1
                continue
            if kind == BRX:
                index = np.asarray(op.fn(batch, fr), dtype=np.int64)
                index = np.broadcast_to(index, (L,))
                targets = np.asarray(op.targets)
                if (index[lanes] >= len(targets)).any():
                    raise LaunchError(f"brx.idx index out of range in {fr.cfunc.function.name}")
                pcs = np.where(lanes, targets[np.minimum(index, len(targets) - 1)], upc + 1)
                lane_pc = pcs
                upc = None
            elif kind == TRAP:
                if lanes.any():
                    raise _stopped(batch, fr, op, lanes)
                upc += 1
            continue
        # -------------------------------------------------------------- divergent
        live = lane_pc[active]
        p = int(live.min())
        if p == int(live.max()):
            upc = p
            lane_pc = None
            full = bool(active.all())
            continue
        if p >= n:
            break
        if p in positions:
            q = _ahead(hook, ops, n, lane_pc, active, positions, path) if not path else None
            if q is None:
                hook.at_boundary(batch, fr, p, lane_pc, active, exited, path)
            else:
                hook.waiting(path + (p,))
                p = q
        at = active & (lane_pc == p)
        op = ops[p]
        emask = at if op.guard < 0 else _guard_mask(regs, op, at)
        kind = op.kind
        batch.steps += 1
        if limit is not None and batch.steps > limit:
            raise StepLimitReached
        count = int(np.count_nonzero(emask))
        batch.thread_instructions += count
        if kind == PLAIN:
            if count:
                op.fn(batch, fr, emask)
                if flip:
                    _apply_flip(batch, fr, op, emask)
            lane_pc = np.where(at, p + 1, lane_pc)
        elif kind == BRANCH:
            lane_pc = np.where(emask, op.target, np.where(at, p + 1, lane_pc))
        elif kind == BARRIER:
            lane_pc = np.where(at, p + 1, lane_pc)
        elif kind in (EXIT, RET):
            if kind == EXIT:
                exited |= emask
            active = active & ~emask
            lane_pc = np.where(at, p + 1, lane_pc)
            if not active.any():
                break
        elif kind == CALL:
            if count:
                gone = _call(batch, fr, op, emask.copy(), hook, path,
                             (p, lane_pc, active, exited))
                exited |= gone
                active = active & ~gone
                if not active.any():
                    break
            lane_pc = np.where(at, p + 1, lane_pc)
        elif kind == BRX:
            index = np.broadcast_to(np.asarray(op.fn(batch, fr), dtype=np.int64), (L,))
            targets = np.asarray(op.targets)
            if (index[emask] >= len(targets)).any():
                raise LaunchError(f"brx.idx index out of range in {fr.cfunc.function.name}")
            chosen = targets[np.clip(index, 0, len(targets) - 1)]
            lane_pc = np.where(emask, chosen, np.where(at, p + 1, lane_pc))
        elif kind == TRAP:
            if count:
                raise _stopped(batch, fr, op, emask)
            lane_pc = np.where(at, p + 1, lane_pc)
    return exited


def _stopped(batch: Batch, fr: Frame, op, lanes: np.ndarray) -> LaunchError:
    """The error of a ``trap`` (or failed assertion) executed by ``lanes``."""
    if op.fn is None:
        return LaunchError(f"trap in {fr.cfunc.function.name} (instruction "
                           f"{op.instr.index})")
    failing = np.flatnonzero(lanes)
    lane = int(failing[0])
    block, thread = batch.position(lane)
    message, file, line, function = op.fn(batch, fr, lane)
    return DeviceAssertionError(batch.program.kernel_name or fr.cfunc.function.name, block,
                                thread, len(failing), message, file, line, function,
                                where(op.instr, fr.cfunc.function))


def _call(batch: Batch, fr: Frame, op, lanes: np.ndarray, hook=None,
          path: tuple[int, ...] = (), caller=None) -> np.ndarray:
    callee = batch.program.function(op.callee, op.instr)
    frame = Frame(callee, batch.L)
    formal = callee.function.params
    if len(formal) != len(op.call_args):
        raise LaunchError(f"call of {op.callee} with {len(op.call_args)} arguments, "
                          f"it takes {len(formal)}")
    for param, arg in zip(formal, op.call_args, strict=True):
        if param.space == "reg":
            for outer, inner in _register_pairs(param, arg, op):
                _copy_register(fr, outer, frame, inner, None, op)
            continue
        if arg not in fr.params:
            raise LaunchError(f"call of {op.callee}: {arg} passed to .param {param.name}")
        src = fr.params[arg]
        dst = frame.params[param.name]
        width = min(src.shape[1], dst.shape[1])
        dst[:, :width] = src[:, :width]
    inner = path + ((op.instr.index if caller is None else caller[0]),)
    if hook is not None and hook.enters(inner):
        pc, lane_pc, active, exited = caller
        batch.call_stack.append(CallSite(fr, path, pc, lane_pc, active, exited, lanes))
        try:
            gone = _run_frame(batch, frame, lanes, hook, None, inner)
        finally:
            batch.call_stack.pop()
    else:
        gone = _run_frame(batch, frame, lanes)
    _returned(callee, op, frame, fr, lanes)
    return gone


def _register_pairs(param, actual, op) -> list[tuple[str, str]]:
    """``(caller register, callee register)`` pairs of a ``.reg`` parameter: a vector one
    (``.reg .v2 .u32 p``) element by element, ``p.x`` and ``p.y`` taking the elements of
    the caller's vector register."""
    if not param.vector:
        if type(actual) is tuple:
            raise LaunchError(f"call of {op.callee}: a vector for the .reg parameter "
                              f"{param.name}")
        return [(actual, param.name)]
    elements = VECTOR_ELEMENTS.get(param.vector, ())
    if type(actual) is not tuple or len(actual) != len(elements):
        raise LaunchError(f"call of {op.callee}: the .reg .{param.vector} parameter "
                          f"{param.name} takes a vector of {len(elements)} registers")
    return [(outer, f"{param.name}.{e}") for outer, e in zip(actual, elements, strict=True)]


def _copy_register(src_frame: Frame, src: str, dst_frame: Frame, dst: str, lanes,
                   op) -> None:
    """Pass a ``.reg`` parameter or return value (ISA 5.1.6.4): the register's bits, as the
    ``mov`` of a value of the declared size would."""
    s = src_frame.cfunc.reg_index.get(src)
    d = dst_frame.cfunc.reg_index.get(dst)
    if s is None or d is None:
        raise LaunchError(f"call of {op.callee}: {src if s is None else dst} is not a register "
                          "for a .reg parameter")
    value = src_frame.regs[s]
    want = dst_frame.regs[d].dtype
    if value.dtype != want:
        value = value.view(want) if value.dtype.itemsize == want.itemsize else \
            value.astype(want)
    if lanes is None:
        dst_frame.regs[d] = value.copy()
    else:
        dst_frame.regs[d][lanes] = value[lanes]


def _returned(callee, op, frame: Frame, fr: Frame, lanes: np.ndarray) -> None:
    """Copy the return values of ``frame`` into the caller ``fr`` for ``lanes``."""
    for param, ret in zip(callee.function.return_params, op.call_rets, strict=False):
        if param.space == "reg":
            for outer, inner in _register_pairs(param, ret, op):
                _copy_register(frame, inner, fr, outer, lanes, op)
            continue
        src = frame.params[param.name]
        dst = fr.params[ret]
        width = min(src.shape[1], dst.shape[1])
        dst[lanes, :width] = src[lanes, :width]
