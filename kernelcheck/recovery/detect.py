"""Fault detection helpers: user checks over output bytes and comparison of byte snapshots.

Three detectors feed the recovery engine (:mod:`kernelcheck.recovery.session`):

* errors from the device (:class:`~kernelcheck.recovery.device.DeviceError`), at the launch
  or at synchronization;
* redundant execution: a replayable instance runs again and only the bytes it may write
  are compared (:func:`differing_bytes` over two :func:`read_ranges` snapshots);
* user checks: any callable ``check(read) -> bool`` where ``read(address, nbytes)`` returns
  device bytes, for example a :class:`Checksum` registered over an instance's outputs.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass

__all__ = ["Checksum", "read_ranges", "differing_bytes", "Reader"]

#: ``read(address, nbytes) -> bytes``
Reader = Callable[[int, int], bytes]


def read_ranges(read: Reader, ranges: Iterable[tuple[int, int]]) -> tuple[bytes, ...]:
    """The bytes of each half-open range, in order."""
    return tuple(read(a, b - a) for a, b in ranges)


def differing_bytes(a: tuple[bytes, ...], b: tuple[bytes, ...]) -> int:
    """How many bytes differ between two snapshots of the same ranges."""
    count = 0
    for x, y in zip(a, b, strict=True):
        if x != y:
            count += sum(1 for p, q in zip(x, y, strict=True) if p != q)
    return count


@dataclass(frozen=True, slots=True)
class Checksum:
    """A CRC-32 expected over byte ranges (an output checksum known to the program).

    Examples
    --------
    >>> mem = bytearray(b"abcdefgh")
    >>> read = lambda a, n: bytes(mem[a:a + n])
    >>> check = Checksum.of(read, ((0, 4),))
    >>> check(read)
    True
    >>> mem[1] ^= 4
    >>> check(read)
    False
    """

    ranges: tuple[tuple[int, int], ...]
    expected: int

    @classmethod
    def of(cls, read: Reader, ranges: Iterable[tuple[int, int]]) -> Checksum:
        """The checksum of ``ranges`` as they are now (for example after a verified run)."""
        ranges = tuple((int(a), int(b)) for a, b in ranges)
        return cls(ranges, _crc(read, ranges))

    def __call__(self, read: Reader) -> bool:
        return _crc(read, self.ranges) == self.expected


def _crc(read: Reader, ranges) -> int:
    crc = 0
    for data in read_ranges(read, ranges):
        crc = zlib.crc32(data, crc)
    return crc
