"""Fatbin containers: the header, the entries, and their (decompressed) payloads.

A fatbin, as ``nvcc -fatbin`` writes it and as host programs embed it, is little-endian::

    header (16 bytes)  u32 magic 0xBA55ED50, u16 version (1), u16 header size (16),
                       u64 size of the entries that follow
    entries            each an entry header, then its payload

    entry header       u16 kind (1 PTX, 2 ELF cubin, 8 LTO-IR), u16 version (0x0101),
                       u32 header size (0x40 for ELF, 0x50 for PTX, 0x78 for LTO-IR),
                       u64 payload size (padded), u32 compressed size (0 if stored plain),
                       u32 reserved_14, u16 code version minor, u16 code version major,
                       u32 arch (80 for sm_80), u32 object name offset, u32 object name size,
                       u64 flags, u64 reserved_30, u64 uncompressed size (0 if plain)

    flags              0x1 64-bit, 0x2 debug, 0x10 Linux host, 0x2000 LZ4-compressed,
                       0x8000 Zstandard-compressed (see :mod:`kernelcheck.binary.decompress`)

The layout follows Cricket's ``cpu-elf2.c`` and was checked field by field against
``cuobjdump -all`` on fatbins written by CUDA 13.0 (uncompressed, ``--compress-mode=speed``
and ``--compress-mode=size``).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass

from kernelcheck.binary.decompress import lz4_block_decompress, zstd_decompress
from kernelcheck.errors import BinaryFormatError

__all__ = [
    "FATBIN_MAGIC",
    "FatbinHeader",
    "FatbinEntry",
    "FatbinFile",
    "parse_fatbin",
    "iter_fatbins",
]

FATBIN_MAGIC = 0xBA55ED50
_HEADER = struct.Struct("<IHHQ")
_ENTRY = struct.Struct("<HHIQIIHHIIIQQQ")

KIND_PTX = 1
KIND_ELF = 2
KIND_LTOIR = 8
KIND_NAMES = {KIND_PTX: "ptx", KIND_ELF: "cubin", KIND_LTOIR: "ltoir"}

FLAG_64BIT = 0x1
FLAG_DEBUG = 0x2
FLAG_LINUX = 0x10
FLAG_COMPRESSED_LZ4 = 0x2000
FLAG_COMPRESSED_ZSTD = 0x8000


@dataclass(frozen=True, slots=True)
class FatbinHeader:
    """The 16-byte header of one fatbin; `offset` is where it starts in the scanned bytes."""

    offset: int
    magic: int
    version: int
    header_size: int
    fat_size: int

    @property
    def end(self) -> int:
        """Offset just past the last entry."""
        return self.offset + self.header_size + self.fat_size


@dataclass(frozen=True, slots=True)
class FatbinEntry:
    """One entry of a fatbin, with its payload as stored (see the module docstring).

    `offset` is the entry header's offset in the scanned bytes; `index` counts entries from
    0 in their fatbin.
    """

    index: int
    offset: int
    kind: int
    version: int
    header_size: int
    payload_size: int
    compressed_size: int
    reserved_14: int
    code_version: tuple[int, int]
    arch_number: int
    name_offset: int
    name_size: int
    flags: int
    reserved_30: int
    uncompressed_size: int
    payload: bytes

    @property
    def kind_name(self) -> str:
        """``ptx``, ``cubin``, ``ltoir``, or ``kind-<n>``."""
        return KIND_NAMES.get(self.kind, f"kind-{self.kind}")

    @property
    def arch(self) -> str:
        """The SM architecture, e.g. ``sm_90``."""
        return f"sm_{self.arch_number}"

    @property
    def compression(self) -> str | None:
        """``lz4``, ``zstd`` or None."""
        if self.flags & FLAG_COMPRESSED_ZSTD:
            return "zstd"
        if self.flags & FLAG_COMPRESSED_LZ4:
            return "lz4"
        return None

    @property
    def compressed(self) -> bool:
        """Whether either compression flag is set."""
        return self.compression is not None

    @property
    def is_64bit(self) -> bool:
        """Whether the entry is for 64-bit host code (flag 0x1)."""
        return bool(self.flags & FLAG_64BIT)

    @property
    def is_debug(self) -> bool:
        """Whether the entry carries debug information (flag 0x2)."""
        return bool(self.flags & FLAG_DEBUG)

    def data(self, *, filename: str | None = None, section: str | None = None) -> bytes:
        """The payload, decompressed when compressed, with PTX's trailing NULs removed.

        Raises
        ------
        BinaryFormatError
            When decompression fails or gives another size than the header says; names
            the entry's offset.
        """
        compression = self.compression
        if compression is None:
            data = self.payload
        else:
            stored = self.payload[: self.compressed_size or len(self.payload)]
            try:
                if compression == "zstd":
                    data = zstd_decompress(stored, self.uncompressed_size)
                else:
                    data = lz4_block_decompress(stored, self.uncompressed_size)
            except ValueError as error:
                raise BinaryFormatError(
                    f"fatbin entry {self.index} ({self.kind_name} {self.arch}): {error}",
                    filename=filename,
                    section=section,
                    offset=self.offset,
                ) from error
        if self.kind == KIND_PTX:
            data = data.rstrip(b"\0")
        return data


@dataclass(frozen=True, slots=True)
class FatbinFile:
    """One parsed fatbin: its header, the entries that could be read, and the errors."""

    header: FatbinHeader
    entries: tuple[FatbinEntry, ...]
    errors: tuple[BinaryFormatError, ...]


def parse_fatbin(
    data: bytes, offset: int = 0, *, filename: str | None = None, section: str | None = None
) -> FatbinFile:
    """Parse the fatbin starting at `offset` of `data`.

    An entry with an unknown kind is reported in ``errors`` and skipped (its header gives
    its size); a header that does not fit stops the walk, also with an error. Only a bad
    fatbin header raises.

    Raises
    ------
    BinaryFormatError
        When the fatbin header is truncated or has the wrong magic.

    Examples
    --------
    >>> parse_fatbin(b"\\x50\\xed\\x55\\xba\\x01\\x00\\x10\\x00" + bytes(8)).entries
    ()
    """
    if offset + _HEADER.size > len(data):
        raise BinaryFormatError(
            f"truncated fatbin header: {len(data) - offset} bytes, need {_HEADER.size}",
            filename=filename,
            section=section,
            offset=offset,
        )
    magic, version, header_size, fat_size = _HEADER.unpack_from(data, offset)
    if magic != FATBIN_MAGIC:
        raise BinaryFormatError(
            f"bad fatbin magic 0x{magic:08x} (expected 0x{FATBIN_MAGIC:08x})",
            filename=filename,
            section=section,
            offset=offset,
        )
    if header_size < _HEADER.size:
        raise BinaryFormatError(
            f"fatbin header size {header_size} is below {_HEADER.size}",
            filename=filename,
            section=section,
            offset=offset,
        )
    header = FatbinHeader(offset, magic, version, header_size, fat_size)
    entries: list[FatbinEntry] = []
    errors: list[BinaryFormatError] = []
    end = header.end
    if end > len(data):
        errors.append(
            BinaryFormatError(
                f"fatbin declares {fat_size} bytes of entries, only "
                f"{len(data) - offset - header_size} are present",
                filename=filename,
                section=section,
                offset=offset,
            )
        )
        end = len(data)
    position = offset + header_size
    index = 0
    while position + _ENTRY.size <= end:
        fields = _ENTRY.unpack_from(data, position)
        (
            kind,
            version,
            entry_header_size,
            payload_size,
            compressed_size,
            reserved_14,
            minor,
            major,
            arch,
            name_offset,
            name_size,
            flags,
            reserved_30,
            uncompressed,
        ) = fields
        start = position + entry_header_size
        if entry_header_size < _ENTRY.size or start + payload_size > end:
            errors.append(
                BinaryFormatError(
                    f"fatbin entry {index}: header size {entry_header_size} and payload size "
                    f"{payload_size} run past the end of the fatbin at 0x{end:x}",
                    filename=filename,
                    section=section,
                    offset=position,
                )
            )
            break
        if kind not in KIND_NAMES:
            errors.append(
                BinaryFormatError(
                    f"fatbin entry {index}: unknown entry kind {kind} (expected 1 PTX, 2 ELF or "
                    "8 LTO-IR); skipped",
                    filename=filename,
                    section=section,
                    offset=position,
                )
            )
        elif (
            flags & (FLAG_COMPRESSED_LZ4 | FLAG_COMPRESSED_ZSTD) and compressed_size > payload_size
        ):
            errors.append(
                BinaryFormatError(
                    f"fatbin entry {index}: compressed size {compressed_size} exceeds the payload "
                    f"size {payload_size}; skipped",
                    filename=filename,
                    section=section,
                    offset=position,
                )
            )
        else:
            entries.append(
                FatbinEntry(
                    index,
                    position,
                    kind,
                    version,
                    entry_header_size,
                    payload_size,
                    compressed_size,
                    reserved_14,
                    (major, minor),
                    arch,
                    name_offset,
                    name_size,
                    flags,
                    reserved_30,
                    uncompressed,
                    bytes(data[start : start + payload_size]),
                )
            )
        position = start + payload_size
        index += 1
    if position < end and position + _ENTRY.size > end and any(data[position:end]):
        errors.append(
            BinaryFormatError(
                f"{end - position} stray bytes after the last fatbin entry",
                filename=filename,
                section=section,
                offset=position,
            )
        )
    return FatbinFile(header, tuple(entries), tuple(errors))


def iter_fatbins(
    data: bytes, *, filename: str | None = None, section: str | None = None
) -> Iterator[FatbinFile | BinaryFormatError]:
    """Every fatbin of a run of concatenated fatbins (as in a host ``.nv_fatbin`` section).

    Each fatbin starts on an 8-byte boundary after the previous one; zero padding between
    them is skipped. A bad header is yielded as a :class:`BinaryFormatError` and ends the
    walk, since nothing says where the next fatbin would start.
    """
    position = 0
    while position + _HEADER.size <= len(data):
        if not any(data[position : position + 8]):
            position += 8
            continue
        try:
            fatbin = parse_fatbin(data, position, filename=filename, section=section)
        except BinaryFormatError as error:
            yield error
            return
        yield fatbin
        position = max(fatbin.header.end, position + _HEADER.size)
        position = (position + 7) & ~7
