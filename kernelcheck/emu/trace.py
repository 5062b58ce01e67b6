"""Exact global-memory trace of a kernel instance, and the dynamic idempotency verdict.

While an instance runs with tracing on, every global byte it touches gets flags: read,
written, first access was a write, read before a later write, touched by an atomic. Atomics
are also recorded per instruction with the addresses they hit.

The verdict (the *oracle*)
    An instance is **not idempotent** when

    * some global byte is both read and written by it (its *clobbered set*): threads and blocks
      are unordered, so a read by one thread and a write by another can happen in either order
      on a GPU, and re-running after the write would read the new value. The emulated order is
      one legal order, so the bytes read before a later write in it (``read_then_write``) are a
      subset reported separately;
    * or it performs a non-idempotent atomic on global memory: ``add``/``inc``/``dec``/``cas``
      always; any atomic whose old value is used (that is a read of the location); ``exch`` of
      a value that may differ when the instance runs again (:mod:`kernelcheck.emu.taint`: a
      value loaded from global memory the instance never writes does not, since those bytes
      keep their value and a write to them is a clobber already), or of different values to
      one address; two different kinds of atomics on one address; a plain store and an
      atomic on one address.

    ``max``/``min``/``and``/``or`` whose result is unused are *idempotent in effect*: applying
    them again cannot change memory, whatever part of the launch ran before. They count as
    writes of their location (so a plain read of it is a clobber) and their operands' own reads
    are ordinary reads (so an operand read from a location the launch writes is a clobber).

    Shared and local memory never affect the verdict.

Soundness: every rule errs toward "not idempotent". Results hold for the inputs of this one
run; an instance whose addresses depend on memory contents may behave differently on other
contents.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

__all__ = ["ByteRanges", "AtomicRecord", "InstanceTrace", "Tracer"]

READ, WRITE, FIRST_WRITE, READ_BEFORE_WRITE, ATOMIC, PLAIN_WRITE = 1, 2, 4, 8, 16, 32
_IDEMPOTENT_OPS = frozenset({"max", "min", "and", "or"})
_WORD = {2: np.dtype(np.uint16), 4: np.dtype(np.uint32), 8: np.dtype(np.uint64)}
_REPEAT = {2: np.uint16(0x0101), 4: np.uint32(0x01010101), 8: np.uint64(0x0101010101010101)}


@dataclass(frozen=True, slots=True)
class ByteRanges:
    """A set of bytes as sorted, disjoint, non-adjacent half-open ``(start, end)`` ranges."""

    ranges: tuple[tuple[int, int], ...] = ()

    @classmethod
    def from_pairs(cls, pairs) -> ByteRanges:
        out: list[list[int]] = []
        for lo, hi in sorted((int(a), int(b)) for a, b in pairs if b > a):
            if out and lo <= out[-1][1]:
                out[-1][1] = max(out[-1][1], hi)
            else:
                out.append([lo, hi])
        return cls(tuple((a, b) for a, b in out))

    @property
    def size(self) -> int:
        """Number of bytes."""
        return sum(b - a for a, b in self.ranges)

    def __bool__(self) -> bool:
        return bool(self.ranges)

    def __contains__(self, address: int) -> bool:
        return any(a <= address < b for a, b in self.ranges)

    def __or__(self, other: ByteRanges) -> ByteRanges:
        return ByteRanges.from_pairs(self.ranges + other.ranges)

    def __and__(self, other: ByteRanges) -> ByteRanges:
        out = []
        i = j = 0
        a, b = self.ranges, other.ranges
        while i < len(a) and j < len(b):
            lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
            if lo < hi:
                out.append((lo, hi))
            if a[i][1] <= b[j][1]:
                i += 1
            else:
                j += 1
        return ByteRanges(tuple(out))

    def to_json(self) -> list[list[int]]:
        return [[a, b] for a, b in self.ranges]


@dataclass(frozen=True, slots=True)
class AtomicRecord:
    """One atomic instruction's global accesses during the instance."""

    instruction: int
    op: str
    type: str
    width: int
    addresses: tuple[int, ...]
    count: int
    idempotent_in_effect: bool
    reason: str


@dataclass(frozen=True)
class InstanceTrace:
    """What an instance did to global memory, and the oracle verdict.

    The verdict, the clobbered set and the atomics are computed when the launch ends; the
    read, written, read-then-write and write-first byte sets are computed from the recorded
    flags on first use (most callers need only the verdict, and on a large launch each set
    is a scan over every traced byte).
    """

    clobbered: ByteRanges
    atomics: tuple[AtomicRecord, ...]
    idempotent: bool
    reasons: tuple[str, ...]
    _flags: tuple = field(default=(), repr=False, compare=False)

    @property
    def verdict(self) -> str:
        """``"idempotent"`` or ``"not_idempotent"``."""
        return "idempotent" if self.idempotent else "not_idempotent"

    def _bytes_where(self, test) -> ByteRanges:
        pairs: list[tuple[int, int]] = []
        for base, flags in self._flags:
            pairs += _runs(test(flags), base)
        return _ordered(pairs)

    @cached_property
    def read_bytes(self) -> ByteRanges:
        """Every global byte the instance read."""
        return self._bytes_where(lambda f: f & READ)

    @cached_property
    def written_bytes(self) -> ByteRanges:
        """Every global byte the instance wrote (atomics included)."""
        return self._bytes_where(lambda f: f & WRITE)

    @cached_property
    def read_then_write(self) -> ByteRanges:
        """Bytes read before a later write in the emulated order."""
        return self._bytes_where(lambda f: f & READ_BEFORE_WRITE)

    @cached_property
    def write_first(self) -> ByteRanges:
        """Bytes whose first access was a write."""
        return self._bytes_where(lambda f: f & FIRST_WRITE)


def _runs(flags: np.ndarray, base: int) -> list[tuple[int, int]]:
    """Maximal runs of nonzero flags as absolute ``(start, end)`` pairs, in order."""
    idx = np.flatnonzero(flags)
    if not len(idx):
        return []
    breaks = np.flatnonzero(np.diff(idx) != 1)
    starts = np.r_[idx[0], idx[breaks + 1]] + base
    ends = np.r_[idx[breaks], idx[-1]] + 1 + base
    return list(zip(starts.tolist(), ends.tolist(), strict=True))


def _ordered(pairs: list[tuple[int, int]]) -> ByteRanges:
    """Runs of separate allocations (disjoint, never adjacent) as one ByteRanges."""
    return ByteRanges(tuple(sorted(pairs)))


class Tracer:
    """Collects byte flags and atomic records for one instance (across its batches)."""

    def __init__(self) -> None:
        self._flags: dict[int, tuple[object, np.ndarray]] = {}
        self._atomics: dict[int, dict] = {}
        self._sites: dict[int, set[str]] = {}
        self._exch_values: dict[int, set[int]] = {}

    def _state(self, alloc) -> np.ndarray:
        entry = self._flags.get(alloc.base)
        if entry is None or entry[0] is not alloc:
            entry = (alloc, np.zeros((max(alloc.size, 1) + 15) // 16 * 16, dtype=np.uint8))
            self._flags[alloc.base] = entry
        return entry[1]

    @staticmethod
    def _bytes(off: np.ndarray, nbytes: int) -> np.ndarray:
        if nbytes == 1:
            return off
        return (off[:, None] + np.arange(nbytes)).ravel()

    @staticmethod
    def _words(s: np.ndarray, off: np.ndarray, nbytes: int):
        """The flag array as words of ``nbytes`` and the word of each aligned access."""
        dtype = _WORD.get(nbytes)
        if dtype is not None and not (off % nbytes).any():
            return s.view(dtype), off // nbytes
        return None, None

    def read(self, alloc, off: np.ndarray, nbytes: int) -> None:
        """Record a read of ``nbytes`` at each offset of ``alloc``."""
        s = self._state(alloc)
        words, idx = self._words(s, off, nbytes)
        if words is None:
            s[self._bytes(off, nbytes)] |= READ
        else:
            words[idx] |= _REPEAT[nbytes] * READ

    def write(self, alloc, off: np.ndarray, nbytes: int, plain: bool = True) -> None:
        """Record a write of ``nbytes`` at each offset of ``alloc``."""
        s = self._state(alloc)
        words, idx = self._words(s, off, nbytes)
        if words is None:
            words, idx = s, self._bytes(off, nbytes)
        cur = words[idx]
        cur8 = cur.view(np.uint8)
        new = cur8 | np.uint8(WRITE | (PLAIN_WRITE if plain else 0))
        new |= (cur8 == 0).astype(np.uint8) * np.uint8(FIRST_WRITE)
        new |= (cur8 & np.uint8(READ)) * np.uint8(READ_BEFORE_WRITE)
        words[idx] = new.view(cur.dtype)

    def atomic(self, alloc, off: np.ndarray, info: tuple, values: np.ndarray) -> None:
        """Record an atomic instruction's accesses (``info`` is decoded at compile time)."""
        index, op, ptype, width, result_used, tainted, where = info
        idempotent = op in _IDEMPOTENT_OPS or op == "exch"
        reason = ""
        if result_used:
            idempotent = False
            reason = f"the result of atom.{op} is used (a read of its location)"
        elif op == "exch" and tainted:
            idempotent = False
            reason = "atom.exch of a value that may differ between runs"
        elif not idempotent:
            reason = f"atom.{op} accumulates"
        addrs = np.unique(off + alloc.base)
        if idempotent:
            self.write(alloc, off, width, plain=False)
            self._state(alloc)[self._bytes(off, width)] |= ATOMIC
            for a in addrs.tolist():
                self._sites.setdefault(a, set()).add(op)
            if op == "exch":
                pairs = np.unique(np.stack([off + alloc.base, values.view(
                    {4: np.uint32, 8: np.uint64, 2: np.uint16}[width]).astype(np.uint64)
                    .astype(np.int64)]), axis=1)
                for a, v in pairs.T.tolist():
                    self._exch_values.setdefault(a, set()).add(v)
        else:
            self.read(alloc, off, width)
            self.write(alloc, off, width, plain=False)
        rec = self._atomics.setdefault(index, {"op": op, "type": ptype, "width": width,
                                               "addresses": set(), "count": 0,
                                               "idempotent": idempotent, "reason": reason,
                                               "where": where})
        rec["addresses"].update(addrs.tolist())
        rec["count"] += len(off)
        if not idempotent:
            rec["idempotent"] = False
            rec["reason"] = rec["reason"] or reason

    def finish(self) -> InstanceTrace:
        """The trace and verdict of everything recorded."""
        clob, mixed = [], []
        flags = []
        for alloc, state in self._flags.values():
            s = state[:alloc.size]
            flags.append((alloc.base, s.copy()))  # the tracer may record on after this
            clob += _runs((s & (READ | WRITE)) == (READ | WRITE), alloc.base)
            if self._atomics:
                mixed += _runs((s & (ATOMIC | PLAIN_WRITE)) == (ATOMIC | PLAIN_WRITE),
                               alloc.base)
        clobbered = _ordered(clob)
        reasons: list[str] = []
        if clobbered:
            a, b = clobbered.ranges[0]
            reasons.append(f"READ_THEN_WRITE: {clobbered.size} global bytes are both read and "
                           f"written (first range 0x{a:x}..0x{b:x})")
        records = []
        for index, rec in sorted(self._atomics.items()):
            idem = rec["idempotent"]
            reason = rec["reason"]
            if idem:
                for a in rec["addresses"]:
                    if len(self._sites.get(a, ())) > 1:
                        idem, reason = False, f"different atomic operations on 0x{a:x}"
                        break
                    if rec["op"] == "exch" and len(self._exch_values.get(a, ())) > 1:
                        idem, reason = False, f"atom.exch of different values to 0x{a:x}"
                        break
            if not idem:
                reasons.append(f"non-idempotent atomic at {rec['where']}: {reason}")
            records.append(AtomicRecord(index, rec["op"], rec["type"], rec["width"],
                                        tuple(sorted(rec["addresses"])), rec["count"], idem,
                                        reason))
        if mixed:
            a, _ = mixed[0]
            reasons.append(f"plain store and atomic on the same bytes at 0x{a:x}")
        return InstanceTrace(clobbered, tuple(records), not reasons, tuple(reasons),
                             tuple(flags))
