"""One entry point for every binary kernelcheck reads: :func:`open_binary`.

It sniffs what it was given (a cubin, a fatbin, a host ELF with embedded fatbins, or PTX
text) and lists every device image inside as an :class:`EmbeddedImage`: kind (``cubin``,
``ptx`` or ``ltoir``), architecture, the (decompressed) bytes and where it came from. A
corrupt part of a container is reported in :attr:`BinaryImage.errors` and the rest is
still listed; only input that cannot be read at all raises
:class:`~kernelcheck.errors.BinaryFormatError`.
"""

from __future__ import annotations

import os
import re
import struct
from dataclasses import dataclass

from kernelcheck.binary.cubin import EM_CUDA, CubinFile
from kernelcheck.binary.fatbin import FATBIN_MAGIC, FatbinFile, parse_fatbin
from kernelcheck.binary.hostelf import find_fatbins
from kernelcheck.errors import BinaryFormatError

__all__ = ["ImageOrigin", "EmbeddedImage", "BinaryImage", "open_binary", "sniff_kind"]

_PTX_TARGET = re.compile(rb"^\s*\.target\s+(\w+)", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class ImageOrigin:
    """Where an embedded image was found.

    Attributes
    ----------
    container : str
        ``file`` (the input is the image), ``fatbin`` or ``host-elf``.
    section : str or None
        Host ELF section holding the fatbin (``.nv_fatbin``, ``__nv_relfatbin``).
    fatbin_index : int or None
        Which fatbin of the section or file, from 0.
    entry_index : int or None
        Which entry of that fatbin, from 0.
    offset : int
        Offset of the image (its fatbin entry header) in the input, or in its section.
    """

    container: str
    section: str | None = None
    fatbin_index: int | None = None
    entry_index: int | None = None
    offset: int = 0

    def describe(self) -> str:
        """A short human-readable location, e.g. ``.nv_fatbin[1]#0 @0x50``."""
        if self.container == "file":
            return "file"
        where = self.section or "fatbin"
        return f"{where}[{self.fatbin_index}]#{self.entry_index} @0x{self.offset:x}"


@dataclass(frozen=True, slots=True)
class EmbeddedImage:
    """One device image: ``cubin``, ``ptx`` or ``ltoir``, with its decompressed bytes."""

    kind: str
    arch: str
    data: bytes
    origin: ImageOrigin
    compressed: bool = False
    compression: str | None = None
    stored_size: int = 0
    filename: str | None = None

    def cubin(self) -> CubinFile:
        """Parse a ``cubin`` image (raises BinaryFormatError for other kinds or bad ELF)."""
        if self.kind != "cubin":
            raise BinaryFormatError(
                f"image is {self.kind}, not a cubin",
                filename=self.filename,
                offset=self.origin.offset,
            )
        label = self.filename or "<input>"
        if self.origin.container != "file":
            label = f"{label}:{self.origin.describe()}"
        return CubinFile(self.data, filename=label)

    def ptx_text(self) -> str:
        """The text of a ``ptx`` image."""
        return self.data.decode("utf-8", errors="replace")


@dataclass(frozen=True, slots=True)
class BinaryImage:
    """What :func:`open_binary` found: the input kind, its images, and per-part errors."""

    filename: str | None
    kind: str
    images: tuple[EmbeddedImage, ...]
    errors: tuple[BinaryFormatError, ...]
    fatbins: tuple[FatbinFile, ...] = ()


def sniff_kind(data: bytes) -> str:
    """``cubin``, ``host-elf``, ``fatbin``, ``ptx`` or ``unknown``, from the first bytes.

    Examples
    --------
    >>> sniff_kind(b"//\\n.version 9.0\\n.target sm_80\\n")
    'ptx'
    """
    if data[:4] == b"\x7fELF":
        if len(data) >= 20:
            (machine,) = struct.unpack_from("<H" if data[5:6] != b"\x02" else ">H", data, 18)
            return "cubin" if machine == EM_CUDA else "host-elf"
        return "cubin"
    if len(data) >= 4 and struct.unpack_from("<I", data)[0] == FATBIN_MAGIC:
        return "fatbin"
    head = data[:4096].lstrip()
    if head.startswith((b"//", b".version", b".target", b".address_size")) or _PTX_TARGET.search(
        head
    ):
        return "ptx"
    return "unknown"


def _ptx_arch(data: bytes) -> str:
    match = _PTX_TARGET.search(data)
    return match.group(1).decode("ascii", "replace").split(",")[0] if match else "unknown"


def _entry_images(fatbin, container, section, fatbin_index, filename, images, errors) -> None:
    for entry in fatbin.entries:
        try:
            data = entry.data(filename=filename, section=section)
        except BinaryFormatError as error:
            errors.append(error)
            continue
        arch = entry.arch if entry.kind_name != "ptx" else f"compute_{entry.arch_number}"
        images.append(
            EmbeddedImage(
                kind=entry.kind_name,
                arch=arch,
                data=data,
                origin=ImageOrigin(container, section, fatbin_index, entry.index, entry.offset),
                compressed=entry.compressed,
                compression=entry.compression,
                stored_size=entry.payload_size,
                filename=filename,
            )
        )


def open_binary(
    source: str | os.PathLike[str] | bytes, *, filename: str | None = None
) -> BinaryImage:
    """Read a cubin, fatbin, host ELF or PTX file and list the device images inside.

    Parameters
    ----------
    source : str, path or bytes
        A path to read, or the bytes themselves.
    filename : str, optional
        Name for messages when `source` is bytes.

    Returns
    -------
    BinaryImage

    Raises
    ------
    BinaryFormatError
        When the input is of no known kind, or its outer structure is unreadable.

    Examples
    --------
    >>> image = open_binary(b"//\\n.version 9.0\\n.target sm_90\\n", filename="k.ptx")
    >>> [(i.kind, i.arch) for i in image.images]
    [('ptx', 'sm_90')]
    """
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
    else:
        filename = filename or os.fspath(source)
        try:
            with open(source, "rb") as handle:
                data = handle.read()
        except OSError as error:
            raise BinaryFormatError(f"cannot read: {error.strerror or error}",
                                    filename=filename) from None
    kind = sniff_kind(data)
    images: list[EmbeddedImage] = []
    errors: list[BinaryFormatError] = []
    fatbins: list[FatbinFile] = []
    if kind == "cubin":
        cubin = CubinFile(data, filename=filename)
        images.append(
            EmbeddedImage(
                "cubin",
                cubin.arch,
                data,
                ImageOrigin("file"),
                stored_size=len(data),
                filename=filename,
            )
        )
    elif kind == "ptx":
        images.append(
            EmbeddedImage(
                "ptx",
                _ptx_arch(data),
                data,
                ImageOrigin("file"),
                stored_size=len(data),
                filename=filename,
            )
        )
    elif kind == "fatbin":
        position, index = 0, 0
        while position + 16 <= len(data):
            if position and not any(data[position : position + 8]):
                position += 8
                continue
            try:
                fatbin = parse_fatbin(data, position, filename=filename)
            except BinaryFormatError as error:
                if index == 0:
                    raise
                errors.append(error)
                break
            fatbins.append(fatbin)
            errors.extend(fatbin.errors)
            _entry_images(fatbin, "fatbin", None, index, filename, images, errors)
            position = (max(fatbin.header.end, position + 16) + 7) & ~7
            index += 1
    elif kind == "host-elf":
        found, found_errors = find_fatbins(data, filename=filename)
        errors.extend(found_errors)
        counters: dict[str, int] = {}
        for host_fatbin in found:
            index = counters.get(host_fatbin.section, 0)
            counters[host_fatbin.section] = index + 1
            fatbins.append(host_fatbin.fatbin)
            _entry_images(
                host_fatbin.fatbin, "host-elf", host_fatbin.section, index, filename, images, errors
            )
    else:
        raise BinaryFormatError(
            f"not a cubin, fatbin, host ELF or PTX file (starts {data[:8].hex() or 'empty'})",
            filename=filename,
            offset=0,
        )
    return BinaryImage(filename, kind, tuple(images), tuple(errors), tuple(fatbins))
