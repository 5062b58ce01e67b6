"""Serial-order semantics of atomic read-modify-writes, vectorized where the order allows.

One atomic instruction executed by many lanes behaves as if the lanes ran one after another in
increasing lane order. Lanes on different addresses do not interact, so the work is split in
*rounds*: round ``r`` applies the ``r``-th access (in lane order) to every address at once.
When few addresses take many accesses each (all threads adding to one counter), the accesses of
each address are instead folded with a numpy ``accumulate`` in lane order, which is still the
serial result bit for bit (floating-point additions happen in the same order). Operations
without a ufunc (``inc``, ``dec``, ``cas``) fall back to a plain loop in that case.

PTX ISA 9.7.13.5 defines the operations: ``inc`` stores ``old >= b ? 0 : old + 1``, ``dec``
stores ``(old == 0 || old > b) ? b : old - 1``, ``cas`` stores ``old == b ? c : old``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["apply_atomic"]

_UFUNC = {"add": np.add, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and,
          "or": np.bitwise_or, "xor": np.bitwise_xor}


def _combine(op: str, old: np.ndarray, b: np.ndarray, c: np.ndarray | None) -> np.ndarray:
    if op in _UFUNC:
        if op in ("min", "max") and old.dtype.kind == "f":
            return (np.fmin if op == "min" else np.fmax)(old, b)
        return _UFUNC[op](old, b).astype(old.dtype)
    if op == "exch":
        return b
    if op == "inc":
        return np.where(old >= b, old.dtype.type(0), old + old.dtype.type(1))
    if op == "dec":
        return np.where((old == 0) | (old > b), b, old - old.dtype.type(1))
    if op == "cas":
        return np.where(old == b, c, old)
    raise ValueError(op)


def half_add(ptype: str):
    """The combine of ``atom.add.noftz`` on f16, bf16 and their packed pairs (ISA 9.7.13.5):
    one rounding to nearest even of the exact sum, per half, no flush of subnormals. Operands
    are the 16- or 32-bit patterns."""
    from kernelcheck.emu.narrow import to_bf16, to_odd, two_sum
    from kernelcheck.emu.values import bf16_to_f32

    def add16(x, y, bf):
        if bf:
            s, e = two_sum(bf16_to_f32(x).astype(np.float64), bf16_to_f32(y).astype(
                np.float64))
            return to_bf16(to_odd(s, e))
        # Two f16 values add exactly in float64; numpy rounds float64 to float16 once.
        return (x.view(np.float16).astype(np.float64) + y.view(np.float16).astype(
            np.float64)).astype(np.float16).view(np.uint16)

    bf = ptype.startswith("bf")
    if ptype in ("f16", "bf16"):
        return lambda old, b: add16(old, b, bf)

    def add_pair(old, b):
        lo = add16((old & np.uint32(0xFFFF)).astype(np.uint16),
                   (b & np.uint32(0xFFFF)).astype(np.uint16), bf)
        hi = add16((old >> np.uint32(16)).astype(np.uint16),
                   (b >> np.uint32(16)).astype(np.uint16), bf)
        return (hi.astype(np.uint32) << np.uint32(16)) | lo.astype(np.uint32)
    return add_pair


def apply_atomic(view: np.ndarray, index: np.ndarray, op: str, b: np.ndarray,
                 c: np.ndarray | None = None, combine=None) -> np.ndarray:
    """Apply ``op`` at ``view[index[k]]`` with operand ``b[k]`` for k in order; return olds.

    Parameters
    ----------
    view : numpy.ndarray
        The memory as a typed 1-D array (modified in place).
    index : numpy.ndarray
        Element index per access, in lane order.
    op : str
        ``add``, ``min``, ``max``, ``and``, ``or``, ``xor``, ``exch``, ``inc``, ``dec``, ``cas``.
    b, c : numpy.ndarray
        Operands (``c`` only for ``cas``: ``b`` is the compare value, ``c`` the new value).
    combine : callable, optional
        ``combine(old, b) -> new`` replacing ``op`` (the half-precision adds).

    Returns
    -------
    numpy.ndarray
        The value each access found (the atomic's result).

    Examples
    --------
    >>> mem = np.zeros(2, dtype=np.uint32)
    >>> apply_atomic(mem, np.array([0, 0, 1]), "add", np.array([5, 7, 1], dtype=np.uint32))
    array([0, 5, 0], dtype=uint32)
    >>> mem
    array([12,  1], dtype=uint32)
    """
    index = np.asarray(index, dtype=np.int64)
    n = len(index)
    old = np.empty(n, dtype=view.dtype)
    if n == 0:
        return old
    order = np.argsort(index, kind="stable")
    sorted_idx = index[order]
    starts = np.flatnonzero(np.r_[True, sorted_idx[1:] != sorted_idx[:-1]])
    group_sizes = np.diff(np.r_[starts, n])
    rounds = int(group_sizes.max())
    if combine is not None:
        rank = np.arange(n) - np.repeat(starts, group_sizes)
        for r in range(rounds):
            sel = order[rank == r]
            where = index[sel]
            cur = view[where]
            old[sel] = cur
            view[where] = combine(cur, b[sel])
        return old
    if rounds <= max(8, len(starts)) or (op not in _UFUNC and op != "exch" and
                                         rounds <= 4 * len(starts)):
        rank = np.arange(n) - np.repeat(starts, group_sizes)
        for r in range(rounds):
            sel = order[rank == r]
            where = index[sel]
            cur = view[where]
            old[sel] = cur
            view[where] = _combine(op, cur, b[sel], None if c is None else c[sel])
        return old
    for s, size in zip(starts, group_sizes, strict=True):
        sel = order[s:s + size]
        where = int(index[sel[0]])
        init = view[where]
        if op in _UFUNC and not (op in ("min", "max") and view.dtype.kind == "f"):
            seq = np.concatenate(([init], b[sel])).astype(view.dtype)
            acc = _UFUNC[op].accumulate(seq, dtype=view.dtype)
            old[sel] = acc[:-1]
            view[where] = acc[-1]
        elif op == "exch":
            old[sel[0]] = init
            old[sel[1:]] = b[sel[:-1]]
            view[where] = b[sel[-1]]
        else:
            cur = np.array([init], dtype=view.dtype)
            for k in sel:
                old[k] = cur[0]
                cur = _combine(op, cur, b[k:k + 1], None if c is None else c[k:k + 1])
            view[where] = cur[0]
    return old
