"""Set up a fixture kernel instance on an emulator: place and fill its buffers, pack its params.

Two placements:

* the instance names its pointers (as in fixtures/expected.toml, or drawn by the soundness
  harness to alias, overlap or interleave): every byte range a pointer may touch is computed
  from the workload table, overlapping ranges are merged into one allocation placed at exactly
  those addresses, and the contents are filled (outputs first, then inputs, then index arrays,
  so that index arrays stay valid when they overlap other buffers);
* the instance gives scalars only: each buffer gets its own fresh allocation (disjoint).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kernelcheck.emu.memory import ALIGNMENT
from kernelcheck.emu.workloads import Buffer, get_workload

__all__ = ["Placement", "setup", "param_values", "read_buffers", "pointer_value",
           "with_pointer"]


@dataclass(frozen=True, slots=True)
class Placement:
    """Where an instance's buffers are: pointers (device addresses) and buffer specs."""

    params: dict
    buffers: tuple[Buffer, ...]
    allocations: tuple[tuple[int, int], ...]


def pointer_value(params: dict, key) -> int:
    """The pointer ``key`` (a name, or ``(struct_param, byte_offset)``) in ``params``."""
    if isinstance(key, tuple):
        name, offset = key
        for off, _size, value in params[name]:
            if off == offset:
                return int(value)
        raise KeyError(key)
    return int(params[key])


def with_pointer(params: dict, key, value: int) -> dict:
    """A copy of ``params`` with pointer ``key`` set to ``value``."""
    out = dict(params)
    if isinstance(key, tuple):
        name, offset = key
        fields = [list(f) for f in params.get(name, [])]
        if not any(f[0] == offset for f in fields):
            fields.append([offset, 8, 0])
        out[name] = sorted([off, size, value if off == offset else v]
                           for off, size, v in fields)
    else:
        out[key] = value
    return out


def _has_pointer(params: dict, key) -> bool:
    try:
        pointer_value(params, key)
        return True
    except (KeyError, TypeError):
        return False


def _fill(buf: Buffer, rng: np.random.Generator, count: int) -> np.ndarray:
    dt = np.dtype(buf.dtype)
    if callable(buf.fill):
        return np.asarray(buf.fill(rng, count), dtype=dt)
    if buf.fill == "zeros":
        return np.zeros(count, dtype=dt)
    if dt.kind == "f":
        return rng.uniform(-1, 1, size=count).astype(dt)
    if dt.kind == "u" and dt.itemsize == 1:
        return rng.integers(0, 256, size=count).astype(dt)
    return rng.integers(0, 100, size=count).astype(dt)


def setup(emu, kernel: str, params: dict, grid, block, rng: np.random.Generator,
          allocations=()) -> Placement:
    """Allocate and fill the buffers of an instance; returns the placement.

    ``params`` maps parameter names to values; pointers that are missing get fresh disjoint
    allocations. ``allocations`` lists extra ``(base, size)`` ranges to allocate (instances
    whose accesses depend on memory contents name them).
    """
    wl = get_workload(kernel)
    grid = tuple(grid) + (1,) * (3 - len(grid))
    block = tuple(block) + (1,) * (3 - len(block))
    buffers = tuple(wl.buffers(params, grid, block))
    params = dict(params)
    ranges = [(int(b), int(b) + int(s)) for b, s in allocations]
    for buf in buffers:
        size = np.dtype(buf.dtype).itemsize
        n = max(buf.hi - buf.lo, 0)
        if not _has_pointer(params, buf.pointer):
            base = emu.alloc(max(n * size, 1))
            params = with_pointer(params, buf.pointer, base - buf.lo * size)
            continue
        ptr = pointer_value(params, buf.pointer)
        for lo, hi in _segments(buf):
            ranges.append((ptr + lo * size, ptr + hi * size))
    placed = []
    for lo, hi in sorted(ranges):
        lo = lo // ALIGNMENT * ALIGNMENT
        if placed and lo <= placed[-1][1] + 2 * 4096:
            placed[-1][1] = max(placed[-1][1], hi)
        else:
            placed.append([lo, hi])
    for lo, hi in placed:
        emu.memory.alloc_at(lo, hi - lo)
    order = sorted(buffers, key=lambda b: (not b.output, callable(b.fill)))
    for buf in order:
        size = np.dtype(buf.dtype).itemsize
        for lo, hi in _segments(buf):
            start = pointer_value(params, buf.pointer) + lo * size
            emu.copy_htod(start, _fill(buf, rng, hi - lo))
    return Placement(params, buffers, tuple((lo, hi - lo) for lo, hi in placed))


def _segments(buf: Buffer) -> tuple[tuple[int, int], ...]:
    if buf.segments is not None:
        return tuple((lo, hi) for lo, hi in buf.segments if hi > lo)
    return ((buf.lo, buf.hi),) if buf.hi > buf.lo else ()


def read_buffers(emu, placement: Placement) -> dict:
    """Current contents of every buffer (elements ``lo`` to ``hi`` of its pointer)."""
    out: dict = {"_offset": {}}
    for buf in placement.buffers:
        size = np.dtype(buf.dtype).itemsize
        base = pointer_value(placement.params, buf.pointer)
        parts = [emu.copy_dtoh(base + lo * size, (hi - lo) * size, buf.dtype)
                 for lo, hi in _segments(buf)]
        out[buf.pointer] = np.concatenate(parts) if parts else np.zeros(0, dtype=buf.dtype)
        out["_offset"][buf.pointer] = -buf.lo
    return out


def param_values(names, params: dict) -> list:
    """Arguments in signature order (struct values as bytes) for :func:`pack_params`."""
    values = []
    for name in names:
        v = params[name]
        if isinstance(v, list):
            size = max(off + sz for off, sz, _ in v)
            raw = bytearray((size + 7) // 8 * 8)
            for off, sz, value in v:
                raw[off:off + sz] = (int(value) & ((1 << 8 * sz) - 1)).to_bytes(sz, "little")
            values.append(bytes(raw))
        else:
            values.append(v)
    return values
