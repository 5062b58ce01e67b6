"""Instrumentation hooks on compiled instructions: per-thread counting and source-value flips.

:func:`instrument` wraps the closure of every plain instruction (the instructions that write
registers or memory; branches, calls and exits are not wrapped) of a loaded program for the
duration of a ``with`` block. A hook sees each execution of an instruction with the lanes
that execute it, *before* the instruction runs and can act on those lanes. The executor is
untouched: the wrapped closure is called exactly where the original one would be, with the
same mask (``None`` means every lane of the batch, all of them live).

Per-lane thread identity comes from :func:`lane_threads`: the linear thread id in the grid
(``block_linear * threads_per_block + tid_linear``, x fastest) of every lane, ``-1`` for
padding lanes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np

from kernelcheck.emu.compiler import PLAIN
from kernelcheck.emu.emulator import Program

__all__ = ["Hook", "instrument", "lane_threads", "lane_of"]

#: ``hook(function_name, instruction_index, batch, frame, lanes)``; ``lanes`` is a boolean
#: mask over the batch's lanes (never ``None``). A hook may return a callable, run right
#: after the instruction.
Hook = Callable[[str, int, object, object, np.ndarray], None]


def lane_threads(batch) -> np.ndarray:
    """The linear grid thread id of every lane of ``batch`` (``-1`` for padding lanes)."""
    cached = getattr(batch, "_kc_threads", None)
    if cached is not None:
        return cached
    gx, gy, _ = batch.grid
    blocks = np.asarray([x + gx * (y + gy * z) for x, y, z in batch.blocks], dtype=np.int64)
    lanes = np.arange(batch.L)
    slot = lanes // batch.padded
    lin = lanes % batch.padded
    out = np.where(lin < batch.threads_per_block,
                   blocks[slot] * batch.threads_per_block + lin, -1)
    try:
        batch._kc_threads = out
    except AttributeError:
        pass
    return out


def lane_of(batch, ctaid, tid) -> int:
    """The lane of thread ``tid`` of block ``ctaid`` in ``batch``, or ``-1``."""
    bx, by, bz = batch.block
    tx, ty, tz = tid
    if not (tx < bx and ty < by and tz < bz):
        return -1
    for k, c in enumerate(batch.blocks):
        if tuple(c) == tuple(ctaid):
            return k * batch.padded + tx + bx * (ty + by * tz)
    return -1


def _wrap(fn, name: str, index: int, hook: Hook):
    def wrapped(st, fr, mask):
        lanes = st.alive if mask is None else mask
        after = hook(name, index, st, fr, lanes)
        result = fn(st, fr, mask)
        if after is not None:
            after()
        return result
    wrapped.__wrapped__ = fn
    return wrapped


@contextmanager
def instrument(program: Program, hook: Hook,
               only: set[tuple[str, int]] | None = None) -> Iterator[None]:
    """Call ``hook`` before every execution of the plain instructions of ``program``.

    Parameters
    ----------
    program : Program
        A loaded program; its closures are restored when the block ends.
    hook : Hook
        Called with ``(function, index, batch, frame, lanes)``.
    only : set of (function, index), optional
        Wrap only these instructions.
    """
    saved = []
    try:
        for cf in program.compiled_functions():
            name = cf.function.name
            for op in cf.ops:
                if op.kind != PLAIN or (only is not None and (name, op.instr.index) not in only):
                    continue
                saved.append((op, op.fn))
                op.fn = _wrap(op.fn, name, op.instr.index, hook)
        yield
    finally:
        for op, fn in saved:
            op.fn = fn
