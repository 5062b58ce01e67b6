"""Fatbins embedded in host ELF files (executables, shared libraries, objects).

nvcc places each translation unit's fatbin in the ``.nv_fatbin`` section (8-byte aligned,
one after the other) and a ``__fatBinC_Wrapper_t`` per unit in ``.nvFatBinSegment``::

    u32 magic 0x466243b1, u32 version, u64 address of the fatbin, u64 filename or prelinked
    fatbins

Relocatable device code (``-rdc=true``) objects keep their fatbin in ``__nv_relfatbin``
instead, for ``nvlink`` to link. :func:`find_fatbins` reads the fatbin sections first, and
only when there are none follows the wrapper addresses, which is where toolchains that put
the fatbin in ``.rodata`` leave it.
"""

from __future__ import annotations

import io
import struct
from dataclasses import dataclass

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

from kernelcheck.binary.fatbin import FATBIN_MAGIC, FatbinFile, iter_fatbins, parse_fatbin
from kernelcheck.errors import BinaryFormatError

__all__ = ["FATBIN_SECTIONS", "WRAPPER_MAGIC", "HostFatbin", "find_fatbins"]

FATBIN_SECTIONS = (".nv_fatbin", "__nv_relfatbin")
WRAPPER_SECTION = ".nvFatBinSegment"
WRAPPER_MAGIC = 0x466243B1
_WRAPPER = struct.Struct("<IIQQ")
_PARSE_ERRORS = (
    ELFError,
    struct.error,
    ValueError,
    KeyError,
    IndexError,
    TypeError,
    UnicodeDecodeError,
    OverflowError,
    AttributeError,
    AssertionError,
)


@dataclass(frozen=True, slots=True)
class HostFatbin:
    """A fatbin found in a host ELF: the section it lies in and its offset inside it."""

    section: str
    section_offset: int
    fatbin: FatbinFile


def find_fatbins(
    data: bytes, *, filename: str | None = None
) -> tuple[tuple[HostFatbin, ...], tuple[BinaryFormatError, ...]]:
    """Every fatbin embedded in a host ELF image, and the errors met on the way.

    Returns
    -------
    (fatbins, errors)
        The fatbins in section order, then the problems (a corrupt fatbin header ends the
        walk of its section; the other sections are still read).

    Raises
    ------
    BinaryFormatError
        When the ELF structure itself cannot be read.
    """
    try:
        elf = ELFFile(io.BytesIO(data))
        sections = []
        for section in elf.iter_sections():
            if section["sh_type"] == "SHT_NOBITS":
                continue
            start, size = section["sh_offset"], section["sh_size"]
            if start + size > len(data):
                if section.name in FATBIN_SECTIONS + (WRAPPER_SECTION,):
                    raise BinaryFormatError(
                        f"section data (0x{size:x} bytes at 0x{start:x}) runs past the end",
                        filename=filename,
                        section=section.name,
                        offset=start,
                    )
                continue
            sections.append((section.name, section["sh_addr"], data[start : start + size]))
    except BinaryFormatError:
        raise
    except _PARSE_ERRORS as error:
        raise BinaryFormatError(
            f"malformed host ELF: {type(error).__name__}: {error}", filename=filename
        ) from error

    found: list[HostFatbin] = []
    errors: list[BinaryFormatError] = []
    for name, _, contents in sections:
        if name not in FATBIN_SECTIONS:
            continue
        for item in iter_fatbins(contents, filename=filename, section=name):
            if isinstance(item, BinaryFormatError):
                errors.append(item)
            else:
                found.append(HostFatbin(name, item.header.offset, item))
                errors.extend(item.errors)
    if not found:
        _follow_wrappers(sections, found, errors, filename)
    return tuple(found), tuple(errors)


def _follow_wrappers(sections, found, errors, filename) -> None:
    wrappers = [contents for name, _, contents in sections if name == WRAPPER_SECTION]
    for contents in wrappers:
        for position in range(0, len(contents) - _WRAPPER.size + 1, _WRAPPER.size):
            magic, _, address, _ = _WRAPPER.unpack_from(contents, position)
            if magic != WRAPPER_MAGIC or address == 0:
                continue
            for name, base, body in sections:
                if base and base <= address < base + len(body):
                    offset = address - base
                    if body[offset : offset + 4] != struct.pack("<I", FATBIN_MAGIC):
                        continue
                    try:
                        fatbin = parse_fatbin(body, offset, filename=filename, section=name)
                    except BinaryFormatError as error:
                        errors.append(error)
                        break
                    found.append(HostFatbin(name, offset, fatbin))
                    errors.extend(fatbin.errors)
                    break
