"""Replay windows: the shortest suffix of a stream's launch log that can be re-executed.

When a fault is detected late (at a synchronization point), the faulty launch may be any of
the launches since the last verified point, and later launches may have consumed its
corrupted output. Recovery restores the bytes each launch of a suffix saved (latest launch
first, so the earliest saved copy of a byte wins) and re-runs the suffix in order.

A suffix ``j..n`` is *re-executable* when

* every launch in it is replayable on its own (its plan saved its clobbered bytes, or it is
  idempotent), and
* for every launch ``i`` in it, every byte ``i`` reads that a later launch of the suffix may
  write was saved either by some launch ``s`` with ``j <= s <= i`` (restoring gives the
  value before ``s``, and re-running ``s .. i-1`` recreates the value ``i`` read), or by a
  launch after ``i`` that comes no later than the first launch after ``i`` that may write
  it (the saved value is then still the one ``i`` read).

A launch's own clobbered bytes are its plan's business (``replayable``); a byte the analysis
places in both the read and the write set of one launch without a clobber between them (the
exact lattice test separated them) is not one.

Bytes read by ``i`` and written only by earlier launches of the suffix are recreated by the
replay; bytes no launch of the suffix writes were never changed. Unknown footprints count
as every allocation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kernelcheck.analysis.intervals import IntervalSet

__all__ = ["WindowEntry", "replay_window", "window_violations"]


@dataclass(frozen=True, slots=True)
class WindowEntry:
    """One logged launch as windows see it: byte sets (``None``: unknown) and saved bytes."""

    reads: IntervalSet | None
    writes: IntervalSet | None
    saved: IntervalSet
    replayable: bool = True


def window_violations(entries: Sequence[WindowEntry], start: int,
                      every: IntervalSet) -> tuple[tuple[int, IntervalSet], ...]:
    """Why the suffix ``entries[start:]`` is not re-executable: ``(launch, bytes)`` pairs.

    A launch that is not replayable on its own is reported with ``every``.
    """
    out = []
    n = len(entries)
    saved = IntervalSet()
    for i in range(start, n):
        e = entries[i]
        saved = saved | e.saved
        if not e.replayable:
            out.append((i, every))
            continue
        # Bytes i reads whose value the restore does not already put back as i saw it.
        need = (every if e.reads is None else e.reads) - saved
        lost = IntervalSet()
        for m in range(i + 1, n):
            if not need:
                break
            later = entries[m]
            need = need - later.saved      # saved by m before any write since i
            w = every if later.writes is None else later.writes
            hit = need & w
            if hit:
                lost = lost | hit
                need = need - hit
        if lost:
            out.append((i, lost))
    return tuple(out)


def replay_window(entries: Sequence[WindowEntry], first_suspect: int,
                  every: IntervalSet) -> int | None:
    """The start of the shortest re-executable suffix that includes ``first_suspect``.

    Parameters
    ----------
    entries : sequence of WindowEntry
        The launches since the last verified point, in issue order.
    first_suspect : int
        The earliest launch that may be faulty.
    every : IntervalSet
        All allocated bytes (what an unknown footprint stands for).

    Returns
    -------
    int or None
        The first launch to replay, or ``None`` when no suffix is re-executable.

    Examples
    --------
    >>> from kernelcheck.analysis.intervals import IntervalSet as S
    >>> a, b = S([(0, 4)]), S([(8, 12)])
    >>> log = [WindowEntry(reads=a, writes=b, saved=S()),      # b = f(a)
    ...        WindowEntry(reads=b, writes=a, saved=S())]      # a = g(b): overwrites a
    >>> replay_window(log, 0, S([(0, 16)])) is None
    True
    >>> log[1] = WindowEntry(reads=b, writes=a, saved=a)        # a saved before launch 1
    >>> replay_window(log, 0, S([(0, 16)]))
    0
    >>> log[1] = WindowEntry(reads=b, writes=a | b, saved=b)    # saves b, overwrites a
    >>> replay_window(log, 0, S([(0, 16)])) is None
    True
    """
    for start in range(first_suspect, -1, -1):
        if not window_violations(entries, start, every):
            return start
    return None
