"""Emulated device memory: allocations at realistic device addresses, byte-addressed.

Every allocation is a little-endian ``numpy.uint8`` buffer placed at a base address that looks
like a real device pointer (the first at ``0x7f0000000000``, 256-byte aligned, with a gap of at
least one page after each allocation, so that running off the end of one allocation never lands
in the next). Accesses outside every live allocation, after a free, or misaligned for their
width raise :class:`MemoryFault`, as compute-sanitizer's memcheck reports them on a GPU.

The buffers are padded to a multiple of 16 bytes so that aligned accesses of any width can use
a typed view of the buffer; the padding is never reachable because bounds are checked against
the requested size.

A per-launch *write guard* (:meth:`DeviceMemory.set_write_guard`) bounds where kernel stores
and atomics may land: with a guard set, a store or atomic on global memory outside its ranges
raises :class:`WriteOutsideFootprint` before any of its bytes change, as a memory checker
would. With no guard (the default) the stores pay one attribute test.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import numpy as np

from kernelcheck.errors import KernelcheckError

__all__ = ["MemoryFault", "WriteOutsideFootprint", "WriteGuard", "Allocation", "DeviceMemory",
           "HEAP_BASE", "HEAP_BASE_32", "ALIGNMENT"]

#: The address of the first allocation (the range the CUDA driver hands out on Linux).
HEAP_BASE = 0x7F00_0000_0000
#: The first allocation of a device with 32-bit addresses (``.address_size 32``, PTX ISA
#: 11.1.3): every byte it hands out has an address below 2**32.
HEAP_BASE_32 = 0x1000_0000
#: Alignment of every allocation (cudaMalloc guarantees at least 256 bytes).
ALIGNMENT = 256
#: Unmapped bytes left after every allocation.
_GAP = 4096


class MemoryFault(KernelcheckError):
    """An invalid memory access: out of bounds, unallocated, freed or misaligned.

    The attributes name where it happened, as compute-sanitizer does: ``kind`` (``"read"``,
    ``"write"`` or ``"atomic"``), ``space``, ``address``, ``width``, and, when raised during a
    launch, ``instruction`` (index and text), ``source_line``, ``tid`` and ``ctaid``.
    """

    def __init__(self, message: str, *, kind: str = "", space: str = "global",
                 address: int | None = None, width: int = 0, instruction: str = "",
                 index: int = -1, source_line: int | None = None,
                 tid: tuple[int, int, int] | None = None,
                 ctaid: tuple[int, int, int] | None = None, kernel: str = "") -> None:
        self.message = message
        self.kind = kind
        self.space = space
        self.address = address
        self.width = width
        self.instruction = instruction
        self.index = index
        self.source_line = source_line
        self.tid = tid
        self.ctaid = ctaid
        self.kernel = kernel
        super().__init__(self._text())

    def _text(self) -> str:
        parts = [f"invalid {self.space} {self.kind} of {self.width} bytes".replace("  ", " ")]
        if self.address is not None:
            parts.append(f"at 0x{self.address:x}")
        text = " ".join(parts) + f": {self.message}"
        where = []
        if self.kernel:
            where.append(f"kernel {self.kernel}")
        if self.instruction:
            where.append(f"instruction {self.index} '{self.instruction}'")
        if self.source_line is not None:
            where.append(f"source line {self.source_line}")
        if self.ctaid is not None:
            where.append(f"block {self.ctaid}")
        if self.tid is not None:
            where.append(f"thread {self.tid}")
        return text + (" (" + ", ".join(where) + ")" if where else "")

    def located(self, **where) -> MemoryFault:
        """A copy of this fault with the launch position filled in."""
        fields = dict(kind=self.kind, space=self.space, address=self.address, width=self.width,
                      instruction=self.instruction, index=self.index,
                      source_line=self.source_line, tid=self.tid, ctaid=self.ctaid,
                      kernel=self.kernel)
        fields.update(where)
        return type(self)(self.message, **fields)


class WriteOutsideFootprint(MemoryFault):
    """A store or atomic outside the write guard of the launch (it was stopped, not done)."""


class WriteGuard:
    """Sorted, disjoint half-open byte ranges where stores may land.

    Examples
    --------
    >>> g = WriteGuard(((0x100, 0x200), (0x300, 0x308)))
    >>> g.outside(np.array([0x100, 0x1fc, 0x304], dtype=np.uint64), 4).tolist()
    [False, False, False]
    >>> g.outside(np.array([0x1fe, 0x2f0], dtype=np.uint64), 4).tolist()
    [True, True]
    """

    __slots__ = ("ranges", "_lo", "_hi")

    def __init__(self, ranges) -> None:
        merged: list[list[int]] = []
        for lo, hi in sorted((int(a), int(b)) for a, b in ranges):
            if hi <= lo:
                continue
            if merged and lo <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], hi)
            else:
                merged.append([lo, hi])
        self.ranges = tuple((lo, hi) for lo, hi in merged)
        self._lo = np.asarray([r[0] for r in merged], dtype=np.uint64)
        self._hi = np.asarray([r[1] for r in merged], dtype=np.uint64)

    def outside(self, addresses: np.ndarray, width: int) -> np.ndarray:
        """Per address, whether ``[address, address + width)`` is not inside one range."""
        addresses = np.asarray(addresses, dtype=np.uint64)
        if not len(self._lo):
            return np.ones(len(addresses), dtype=bool)
        k = np.searchsorted(self._lo, addresses, side="right").astype(np.int64) - 1
        inside = k >= 0
        kk = np.maximum(k, 0)
        return ~(inside & (addresses + np.uint64(width) <= self._hi[kk]))


@dataclass(slots=True, eq=False)
class Allocation:
    """One live allocation: ``base`` address, ``size`` in bytes and its byte buffer."""

    base: int
    size: int
    data: np.ndarray
    name: str = ""

    @property
    def end(self) -> int:
        return self.base + self.size


class DeviceMemory:
    """The global memory of one emulated device.

    Examples
    --------
    >>> mem = DeviceMemory()
    >>> p = mem.alloc(16)
    >>> hex(p)
    '0x7f0000000000'
    >>> mem.copy_htod(p, np.arange(4, dtype=np.uint32))
    >>> mem.copy_dtoh(p + 4, 4, np.uint32)
    array([1], dtype=uint32)
    """

    def __init__(self, address_size: int = 64) -> None:
        if address_size not in (32, 64):
            raise ValueError(f"address_size must be 32 or 64, not {address_size}")
        #: Bits of a device address: 32 places every allocation below 2**32.
        self.address_size = address_size
        self._bases: list[int] = []
        self._allocs: list[Allocation] = []
        self._next = HEAP_BASE if address_size == 64 else HEAP_BASE_32
        self._freed: list[tuple[int, int]] = []
        #: the write guard of the running launch (``None``: stores are not checked)
        self.write_guard: WriteGuard | None = None

    # ------------------------------------------------------------------ write guard
    def set_write_guard(self, ranges) -> None:
        """Let kernel stores and atomics land only in ``ranges`` (``None``: anywhere).

        Parameters
        ----------
        ranges : iterable of (int, int) or None
            Half-open global byte ranges; copies from the host are never checked.
        """
        self.write_guard = None if ranges is None else WriteGuard(ranges)

    def check_writes(self, addresses: np.ndarray, width: int, kind: str) -> None:
        """Raise :class:`WriteOutsideFootprint` (naming the first lane position in
        ``fault_lane``) when a ``width``-byte write at one of ``addresses`` leaves the guard."""
        guard = self.write_guard
        if guard is None:
            return
        bad = guard.outside(addresses, width)
        if bad.any():
            k = int(np.argmax(bad))
            err = WriteOutsideFootprint("write outside the instance's write footprint",
                                        kind=kind, address=int(addresses[k]), width=width)
            err.fault_lane = k
            raise err

    # ------------------------------------------------------------------ allocation
    def alloc(self, nbytes: int, *, name: str = "") -> int:
        """Allocate ``nbytes`` (zero-filled) and return the base address."""
        if nbytes < 0:
            raise ValueError(f"allocation size must be >= 0, got {nbytes}")
        base = self._next
        if self.address_size == 32 and base + nbytes > 1 << 32:
            raise MemoryFault(f"out of memory: {nbytes} bytes do not fit below 2**32 (a "
                              "device with 32-bit addresses)", kind="alloc", address=base,
                              width=nbytes)
        padded = max(16, (nbytes + 15) // 16 * 16)
        alloc = Allocation(base, int(nbytes), np.zeros(padded, dtype=np.uint8), name)
        k = bisect.bisect(self._bases, base)
        self._bases.insert(k, base)
        self._allocs.insert(k, alloc)
        span = max(nbytes, 1) + _GAP
        self._next = base + (span + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT
        return base

    def alloc_at(self, base: int, nbytes: int, *, name: str = "") -> int:
        """Allocate ``nbytes`` at exactly ``base`` (must be aligned and free); return ``base``."""
        if base % ALIGNMENT:
            raise ValueError(f"base 0x{base:x} is not {ALIGNMENT}-byte aligned")
        for a in self._allocs:
            if base < a.end + _GAP and a.base < base + nbytes + _GAP:
                raise ValueError(f"0x{base:x}+{nbytes} overlaps the allocation at 0x{a.base:x}")
        padded = max(16, (nbytes + 15) // 16 * 16)
        alloc = Allocation(base, int(nbytes), np.zeros(padded, dtype=np.uint8), name)
        k = bisect.bisect(self._bases, base)
        self._bases.insert(k, base)
        self._allocs.insert(k, alloc)
        end = base + nbytes + _GAP
        if end > self._next:
            self._next = (end + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT
        return base

    def free(self, address: int) -> None:
        """Free the allocation that starts at ``address``."""
        k = bisect.bisect(self._bases, address) - 1
        if k < 0 or self._bases[k] != address:
            raise MemoryFault("free of an address that is not an allocation base",
                              kind="free", address=address)
        alloc = self._allocs.pop(k)
        self._bases.pop(k)
        self._freed.append((alloc.base, alloc.end))

    def allocations(self) -> tuple[Allocation, ...]:
        """The live allocations, by increasing base address."""
        return tuple(self._allocs)

    def num_allocations(self) -> int:
        return len(self._allocs)

    def find(self, address: int) -> Allocation | None:
        """The live allocation containing ``address``, or ``None``."""
        k = bisect.bisect(self._bases, address) - 1
        if k >= 0:
            alloc = self._allocs[k]
            if address < alloc.end:
                return alloc
        return None

    def _fault_reason(self, address: int) -> str:
        for lo, hi in self._freed:
            if lo <= address < hi and self.find(address) is None:
                return "use after free"
        alloc = self.find(address)
        if alloc is not None:
            return f"out of bounds of the {alloc.size}-byte allocation at 0x{alloc.base:x}"
        k = bisect.bisect(self._bases, address) - 1
        if k >= 0:
            a = self._allocs[k]
            return (f"address is {address - a.end} bytes past the end of the {a.size}-byte "
                    f"allocation at 0x{a.base:x}")
        return "address is not in any allocation"

    def resolve(self, address: int, nbytes: int, kind: str = "access") -> tuple[Allocation, int]:
        """The allocation and offset for ``nbytes`` at ``address``; faults when not inside one."""
        alloc = self.find(address)
        if alloc is None or address + nbytes > alloc.end:
            raise MemoryFault(self._fault_reason(address), kind=kind, address=address,
                              width=nbytes)
        return alloc, address - alloc.base

    # ------------------------------------------------------------------ copies
    def copy_htod(self, address: int, data) -> None:
        """Copy a host array (any dtype, C order) or bytes to device memory at ``address``."""
        raw = np.frombuffer(bytes(data), dtype=np.uint8) if isinstance(
            data, bytes | bytearray | memoryview) else np.ascontiguousarray(data).view(np.uint8)
        raw = raw.reshape(-1)
        alloc, off = self.resolve(address, raw.size, "write")
        alloc.data[off:off + raw.size] = raw

    def copy_dtoh(self, address: int, nbytes: int, dtype=np.uint8) -> np.ndarray:
        """A host copy of ``nbytes`` at ``address`` viewed as ``dtype``."""
        alloc, off = self.resolve(address, nbytes, "read")
        return alloc.data[off:off + nbytes].copy().view(dtype)

    def copy_dtod(self, dst: int, src: int, nbytes: int) -> None:
        """Copy ``nbytes`` from ``src`` to ``dst`` (overlapping ranges behave like memmove)."""
        data = self.copy_dtoh(src, nbytes)
        self.copy_htod(dst, data)

    def memset(self, address: int, value: int, nbytes: int) -> None:
        """Set ``nbytes`` at ``address`` to the byte ``value``."""
        alloc, off = self.resolve(address, nbytes, "write")
        alloc.data[off:off + nbytes] = value & 0xFF

    # ------------------------------------------------------------------ snapshots
    def snapshot(self) -> dict[int, bytes]:
        """The contents of every live allocation, keyed by base address."""
        return {a.base: a.data[:a.size].tobytes() for a in self._allocs}

    def restore(self, snapshot: dict[int, bytes]) -> None:
        """Put back contents taken by :meth:`snapshot` (allocations must still exist)."""
        for base, data in snapshot.items():
            alloc, _ = self.resolve(base, len(data), "write")
            alloc.data[:len(data)] = np.frombuffer(data, dtype=np.uint8)

    # ------------------------------------------------------------------ vector access
    def locate(self, addresses: np.ndarray, width: int, kind: str
               ) -> tuple[Allocation, np.ndarray] | list[tuple[Allocation, np.ndarray,
                                                                np.ndarray]]:
        """Map lane addresses (``uint64``) to allocation offsets, checking bounds and alignment.

        Returns ``(alloc, offsets)`` when every address falls in one allocation (the common
        case), else a list of ``(alloc, lane_positions, offsets)``. Raises :class:`MemoryFault`
        naming the first faulting lane position in ``fault_lane``.
        """
        if width > 1:
            bad = (addresses % width) != 0
            if bad.any():
                k = int(np.argmax(bad))
                err = MemoryFault(f"misaligned address for a {width}-byte access", kind=kind,
                                  address=int(addresses[k]), width=width)
                err.fault_lane = k
                raise err
        lo = int(addresses.min())
        hi = int(addresses.max())
        alloc = self.find(lo)
        if alloc is not None and hi + width <= alloc.end:
            return alloc, (addresses - np.uint64(alloc.base)).astype(np.int64)
        bases = np.asarray(self._bases, dtype=np.uint64)
        slot = np.searchsorted(bases, addresses, side="right").astype(np.int64) - 1
        groups = []
        for s in np.unique(slot):
            lanes = np.nonzero(slot == s)[0]
            if s < 0:
                k = int(lanes[0])
                raise _located_fault(self, addresses, k, width, kind)
            a = self._allocs[int(s)]
            off = (addresses[lanes] - np.uint64(a.base)).astype(np.int64)
            over = off + width > a.size
            if over.any():
                k = int(lanes[int(np.argmax(over))])
                raise _located_fault(self, addresses, k, width, kind)
            groups.append((a, lanes, off))
        return groups


def _located_fault(mem: DeviceMemory, addresses: np.ndarray, k: int, width: int,
                   kind: str) -> MemoryFault:
    address = int(addresses[k])
    err = MemoryFault(mem._fault_reason(address), kind=kind, address=address, width=width)
    err.fault_lane = k
    return err
