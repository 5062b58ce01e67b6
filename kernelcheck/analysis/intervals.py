"""Immutable sets of byte ranges, modelled on hypothesis' ``IntervalSet``.

Byte ranges are half-open ``[start, stop)``, the way CUDA programmers write buffers
(``[out, out + 4*n)``). An :class:`IntervalSet` holds a sorted tuple of disjoint, non-adjacent
ranges; ``|``, ``&`` and ``-`` return new sets and never change their operands. The read set,
the write set and the clobbered set of a kernel instance are all values of this type.

Invariant (checked by the constructor of every result): for consecutive ranges ``(a, b)`` and
``(c, d)`` of ``ranges``, ``a < b < c < d``: ranges are non-empty, sorted, and separated by
at least one byte that is not in the set (touching ranges are merged)::

    [a     b)   [c   d)        a < b < c: a gap of at least one byte between them
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

__all__ = ["IntervalSet", "DeferredIntervalSet"]


class IntervalSet:
    """A finite set of integers (byte addresses) stored as disjoint half-open ranges.

    Parameters
    ----------
    ranges : iterable of (int, int)
        Half-open ranges ``(start, stop)``; empty ones (``stop <= start``) are dropped,
        overlapping and touching ones merged.

    Examples
    --------
    >>> s = IntervalSet([(0, 4), (4, 8), (16, 20)])
    >>> s.ranges
    ((0, 8), (16, 20))
    >>> (s & IntervalSet([(6, 18)])).ranges
    ((6, 8), (16, 18))
    """

    __slots__ = ("ranges", "_hash")

    def __init__(self, ranges: Iterable[tuple[int, int]] = ()) -> None:
        items = sorted((int(a), int(b)) for a, b in ranges if b > a)
        merged: list[tuple[int, int]] = []
        for start, stop in items:
            # Invariant: merged is sorted, disjoint and non-adjacent.
            if merged and start <= merged[-1][1]:
                if stop > merged[-1][1]:
                    merged[-1] = (merged[-1][0], stop)
            else:
                merged.append((start, stop))
        self.ranges: tuple[tuple[int, int], ...] = tuple(merged)
        self._hash: int | None = None

    @classmethod
    def _from_normalized(cls, ranges: tuple[tuple[int, int], ...]) -> IntervalSet:
        result = cls.__new__(cls)
        result.ranges = ranges
        result._hash = None
        return result

    @staticmethod
    def single(start: int, stop: int) -> IntervalSet:
        """The set of one range ``[start, stop)`` (empty when ``stop <= start``), built
        without sorting or merging.

        >>> IntervalSet.single(0, 4).ranges
        ((0, 4),)
        """
        result = IntervalSet.__new__(IntervalSet)
        result.ranges = ((start, stop),) if stop > start else ()
        result._hash = None
        return result

    # ------------------------------------------------------------------ container protocol
    def __len__(self) -> int:
        """The number of integers (bytes) in the set."""
        return sum(b - a for a, b in self.ranges)

    def __bool__(self) -> bool:
        return bool(self.ranges)

    def __contains__(self, value: int) -> bool:
        lo, hi = 0, len(self.ranges)
        while lo < hi:
            mid = (lo + hi) // 2
            start, stop = self.ranges[mid]
            if value < start:
                hi = mid
            elif value >= stop:
                lo = mid + 1
            else:
                return True
        return False

    def __iter__(self) -> Iterator[int]:
        for start, stop in self.ranges:
            yield from range(start, stop)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, IntervalSet) and self.ranges == other.ranges

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(self.ranges)
        return self._hash

    def __repr__(self) -> str:
        return f"IntervalSet({list(self.ranges)!r})"

    # ------------------------------------------------------------------ algebra
    def __or__(self, other: IntervalSet) -> IntervalSet:
        return IntervalSet(self.ranges + other.ranges)

    def union(self, other: IntervalSet) -> IntervalSet:
        return self | other

    def __and__(self, other: IntervalSet) -> IntervalSet:
        out: list[tuple[int, int]] = []
        a, b = self.ranges, other.ranges
        i = j = 0
        # Invariant: every common byte below max(a[i].start, b[j].start) is already in out.
        while i < len(a) and j < len(b):
            start = max(a[i][0], b[j][0])
            stop = min(a[i][1], b[j][1])
            if start < stop:
                out.append((start, stop))
            if a[i][1] <= b[j][1]:
                i += 1
            else:
                j += 1
        return IntervalSet._from_normalized(tuple(out))

    def intersection(self, other: IntervalSet) -> IntervalSet:
        return self & other

    def __sub__(self, other: IntervalSet) -> IntervalSet:
        out: list[tuple[int, int]] = []
        b = other.ranges
        j = 0
        for start, stop in self.ranges:
            cur = start
            while j < len(b) and b[j][1] <= cur:
                j += 1
            k = j
            while k < len(b) and b[k][0] < stop:
                if b[k][0] > cur:
                    out.append((cur, b[k][0]))
                cur = max(cur, b[k][1])
                k += 1
            if cur < stop:
                out.append((cur, stop))
        return IntervalSet._from_normalized(tuple(out))

    def difference(self, other: IntervalSet) -> IntervalSet:
        return self - other

    def isdisjoint(self, other: IntervalSet) -> bool:
        """Whether no byte is in both sets (no allocation of the intersection)."""
        a, b = self.ranges, other.ranges
        i = j = 0
        while i < len(a) and j < len(b):
            if a[i][0] < b[j][1] and b[j][0] < a[i][1]:
                return False
            if a[i][1] <= b[j][1]:
                i += 1
            else:
                j += 1
        return True

    def to_json(self) -> list[list[int]]:
        """The ranges as ``[[start, stop], ...]``."""
        return [[a, b] for a, b in self.ranges]

    @classmethod
    def from_json(cls, data: Iterable[Iterable[int]]) -> IntervalSet:
        return cls(tuple(pair) for pair in data)  # type: ignore[misc]


_RANGES = IntervalSet.__dict__["ranges"]  # the slot descriptor of the base class


class DeferredIntervalSet(IntervalSet):
    """An :class:`IntervalSet` whose ranges are computed on first use.

    ``compute(*args)`` returns an iterable of half-open ranges (normalized like the
    constructor's argument); it runs once, the first time anything reads the set, and the
    object is then an ordinary, complete :class:`IntervalSet` (equal to, and hashing like,
    one built eagerly from the same ranges). A launch-time verdict uses it for the
    clobbered set, which recovery reads but the verdict itself does not need.

    Examples
    --------
    >>> calls = []
    >>> s = DeferredIntervalSet(lambda: calls.append(1) or [(8, 12), (0, 4)])
    >>> calls
    []
    >>> s.ranges, s == IntervalSet([(0, 4), (8, 12)]), calls
    (((0, 4), (8, 12)), True, [1])
    """

    __slots__ = ("_compute", "_args")

    def __init__(self, compute, *args) -> None:  # noqa: D107 - documented on the class
        self._compute = compute
        self._args = args
        self._hash = None

    @property
    def ranges(self) -> tuple[tuple[int, int], ...]:  # type: ignore[override]
        compute = self._compute
        if compute is not None:
            _RANGES.__set__(self, IntervalSet(compute(*self._args)).ranges)
            self._compute = self._args = None
        return _RANGES.__get__(self, IntervalSet)

    def __reduce__(self):
        # Pickled and copied as the plain set it stands for (the closure is not needed).
        return IntervalSet._from_normalized, (self.ranges,)
