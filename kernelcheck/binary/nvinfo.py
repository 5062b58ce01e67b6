"""Raw ``.nv.info`` attribute records and the decoders of the attributes kernelcheck uses.

A cubin describes its kernels to the driver in ``.nv.info`` (attributes of the whole image,
most of them naming a function by symbol index) and ``.nv.info.<kernel>`` (attributes of one
kernel). Both hold a sequence of little-endian records, each starting with a four-byte
header::

    byte 0   format     EIFMT_NVAL | EIFMT_BVAL | EIFMT_HVAL | EIFMT_SVAL
    byte 1   attribute  an EIATTR_* id (see :mod:`kernelcheck.binary.eiattr`)
    byte 2-3 value      NVAL: unused; BVAL: the byte value and a pad byte;
                        HVAL: a 16-bit value; SVAL: the payload size in bytes
    SVAL only: the payload, that many bytes

Every record therefore takes at least four bytes: ``cuobjdump -elf`` 13.5 steps four bytes
over an NVAL record, and ptxas pads ``EIFMT_NVAL`` records the same way. ``.nv.compat`` uses
the same layout with EICOMPAT_ATTR ids.

The payload layouts decoded here were checked against ``cuobjdump -elf`` on cubins built by
CUDA 13.0 for sm_75 to sm_121 (see ``tests/binary``).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from kernelcheck.binary.eiattr import (
    EIATTR,
    EIFMT_BVAL,
    EIFMT_HVAL,
    EIFMT_NAMES,
    EIFMT_NVAL,
    EIFMT_SVAL,
    eiattr_name,
)
from kernelcheck.errors import BinaryFormatError

__all__ = [
    "NvInfoRecord",
    "KernelParam",
    "ParamCbank",
    "FunctionValue",
    "parse_nv_info",
    "decode_kparam_info",
    "decode_kparam_info_v2",
    "decode_param_cbank",
    "decode_function_value",
    "decode_record",
]

_RECORD_HEADER = struct.Struct("<BBH")

#: Attributes of the image-wide ``.nv.info`` whose payload is (symbol index, value).
FUNCTION_VALUE_ATTRIBUTES = frozenset(
    EIATTR[name]
    for name in (
        "EIATTR_REGCOUNT",
        "EIATTR_FRAME_SIZE",
        "EIATTR_MIN_STACK_SIZE",
        "EIATTR_MAX_STACK_SIZE",
        "EIATTR_CRS_STACK_SIZE",
    )
)


@dataclass(frozen=True, slots=True)
class NvInfoRecord:
    """One attribute record as stored.

    Attributes
    ----------
    format : int
        The EIFMT_* record format.
    attribute : int
        The EIATTR_* (or EICOMPAT_ATTR_*) id.
    offset : int
        Offset of the record header from the start of its section.
    value : int or None
        The immediate value of a BVAL or HVAL record; None for NVAL and SVAL.
    payload : bytes
        The payload of an SVAL record; empty for the other formats.
    """

    format: int
    attribute: int
    offset: int
    value: int | None
    payload: bytes

    @property
    def name(self) -> str:
        """The EIATTR name of the attribute (``EIATTR_UNKNOWN_0x..`` when it has none)."""
        return eiattr_name(self.attribute)

    @property
    def format_name(self) -> str:
        """The EIFMT name of the record format."""
        return EIFMT_NAMES.get(self.format, f"EIFMT_0x{self.format:02x}")

    def words(self) -> tuple[int, ...]:
        """The payload as little-endian 32-bit words (a trailing partial word is dropped)."""
        count = len(self.payload) // 4
        return struct.unpack_from(f"<{count}I", self.payload)


@dataclass(frozen=True, slots=True)
class KernelParam:
    """One kernel parameter from an EIATTR_KPARAM_INFO (or EIATTR_KPARAM_INFO_V2) record.

    Attributes
    ----------
    index : int
        The first word of the record (0 in every cubin seen so far).
    ordinal : int
        Position of the parameter in the kernel signature, from 0.
    offset : int
        Byte offset of the parameter inside the parameter area of constant bank 0.
    size : int
        Size in bytes: bits 18..31 of the last word.
    log_alignment : int
        Bits 0..7 of the last word (cuobjdump: "Pointee's logAlignment").
    space : int
        Bits 8..11 of the last word (cuobjdump: "Space").
    cbank : int
        Bits 12..16 of the last word (cuobjdump: "cbank"; 0x1f in every image seen).
    is_cbank : bool
        True when bit 17 is clear (cuobjdump: "Parameter Space : CBANK").
    """

    index: int
    ordinal: int
    offset: int
    size: int
    log_alignment: int
    space: int
    cbank: int
    is_cbank: bool


@dataclass(frozen=True, slots=True)
class ParamCbank:
    """EIATTR_PARAM_CBANK: where the parameters sit in constant bank 0.

    Attributes
    ----------
    symbol_index : int
        Symbol of the kernel's ``.nv.constant0.<kernel>`` section.
    offset : int
        Start of the parameter area in the bank (0x160 on sm_75..sm_89, 0x210 on sm_90 and
        later, as nvcc 13.0 lays it out).
    size : int
        Size of the parameter area in bytes.
    """

    symbol_index: int
    offset: int
    size: int


@dataclass(frozen=True, slots=True)
class FunctionValue:
    """A per-function value of the image-wide ``.nv.info`` (EIATTR_REGCOUNT and friends).

    Attributes
    ----------
    symbol_index : int
        Symbol table index of the function.
    value : int
        The register count, frame size or stack size.
    """

    symbol_index: int
    value: int


def _error(message: str, where: str, offset: int | None, filename: str | None):
    return BinaryFormatError(message, filename=filename, section=where, offset=offset)


def parse_nv_info(
    data: bytes, *, section: str = ".nv.info", filename: str | None = None
) -> tuple[NvInfoRecord, ...]:
    """Split the bytes of an ``.nv.info``-style section into records.

    Parameters
    ----------
    data : bytes
        The section contents.
    section : str
        Section name, used in error messages.
    filename : str, optional
        File name, used in error messages.

    Returns
    -------
    tuple of NvInfoRecord
        The records in file order.

    Raises
    ------
    BinaryFormatError
        On an unknown record format, or a record running past the end of the section;
        the offset is from the start of the section.

    Examples
    --------
    >>> parse_nv_info(bytes([3, 0x19, 0x18, 0, 4, 0x37, 4, 0, 0x82, 0, 0, 0]))[0].value
    24
    """
    records = []
    position = 0
    end = len(data)
    while position < end:
        if end - position < _RECORD_HEADER.size:
            raise _error(
                f"truncated attribute record: {end - position} bytes left, a header takes 4",
                section,
                position,
                filename,
            )
        fmt, attribute, half = _RECORD_HEADER.unpack_from(data, position)
        if fmt == EIFMT_SVAL:
            start = position + _RECORD_HEADER.size
            if start + half > end:
                raise _error(
                    f"{eiattr_name(attribute)} payload of {half} bytes runs past the end of "
                    f"the section ({end - start} bytes left)",
                    section,
                    position,
                    filename,
                )
            records.append(
                NvInfoRecord(fmt, attribute, position, None, bytes(data[start : start + half]))
            )
            position = start + half
        elif fmt in (EIFMT_NVAL, EIFMT_BVAL, EIFMT_HVAL):
            value = None if fmt == EIFMT_NVAL else (half & 0xFF if fmt == EIFMT_BVAL else half)
            records.append(NvInfoRecord(fmt, attribute, position, value, b""))
            position += _RECORD_HEADER.size
        else:
            raise _error(
                f"unknown attribute record format 0x{fmt:02x} (expected 1..4, EIFMT_NVAL.."
                "EIFMT_SVAL)",
                section,
                position,
                filename,
            )
    return tuple(records)


def _check_payload(record: NvInfoRecord, size: int, section: str, filename: str | None) -> None:
    if record.format != EIFMT_SVAL or len(record.payload) < size:
        raise _error(
            f"{record.name} needs an EIFMT_SVAL payload of {size} bytes, found "
            f"{record.format_name} with {len(record.payload)}",
            section,
            record.offset,
            filename,
        )


def decode_kparam_info(
    record: NvInfoRecord, *, section: str = ".nv.info", filename: str | None = None
) -> KernelParam:
    """Decode an EIATTR_KPARAM_INFO record (12 bytes: index, ordinal, offset, size/flags).

    Examples
    --------
    >>> rec = parse_nv_info(bytes.fromhex("04170c00 00000000 03001000 00f02100"))[0]
    >>> p = decode_kparam_info(rec); (p.ordinal, p.offset, p.size)
    (3, 16, 8)
    """
    _check_payload(record, 12, section, filename)
    index, ordinal, offset, flags = struct.unpack_from("<IHHI", record.payload)
    return KernelParam(
        index=index,
        ordinal=ordinal,
        offset=offset,
        size=(flags >> 18) & 0x3FFF,
        log_alignment=flags & 0xFF,
        space=(flags >> 8) & 0xF,
        cbank=(flags >> 12) & 0x1F,
        is_cbank=not (flags >> 17) & 1,
    )


#: The largest parameter area a kernel may have (CUDA 12.1 and later), in bytes.
MAX_PARAM_BYTES = 32764


def decode_kparam_info_v2(
    record: NvInfoRecord, *, section: str = ".nv.info", filename: str | None = None
) -> KernelParam:
    """Decode an EIATTR_KPARAM_INFO_V2 record, which ptxas writes instead of
    EIATTR_KPARAM_INFO for the parameters of a kernel whose parameters pass 4 KB.

    Its 12 bytes are the index, the ordinal (16 bits), the offset (16 bits) and the size as
    a whole 32-bit word, as cuobjdump prints them. cuobjdump also prints a pointee
    alignment and a space, zero in every record seen, whose bits are not known: a size
    word past the largest parameter area (32764 bytes) is refused rather than read as a
    size. The alignment and space fields are 0 and ``cbank`` is 0x1f, as in the V1 records
    of the same images.

    Examples
    --------
    >>> rec = parse_nv_info(bytes.fromhex("04450c00 00000000 00000000 885e0000"))[0]
    >>> p = decode_kparam_info_v2(rec); (p.ordinal, p.offset, p.size)
    (0, 0, 24200)
    """
    _check_payload(record, 12, section, filename)
    index, ordinal, offset, size = struct.unpack_from("<IHHI", record.payload)
    if size > MAX_PARAM_BYTES or offset + size > MAX_PARAM_BYTES:
        raise _error(
            f"{record.name}: parameter {ordinal} of {size:#x} bytes at offset {offset:#x} "
            f"passes the {MAX_PARAM_BYTES}-byte parameter area (a layout of the record "
            "this reader does not know)",
            section,
            record.offset,
            filename,
        )
    return KernelParam(
        index=index,
        ordinal=ordinal,
        offset=offset,
        size=size,
        log_alignment=0,
        space=0,
        cbank=0x1F,
        is_cbank=True,
    )


def decode_param_cbank(
    record: NvInfoRecord, *, section: str = ".nv.info", filename: str | None = None
) -> ParamCbank:
    """Decode EIATTR_PARAM_CBANK: a symbol index, then the offset (low half) and size (high).

    Examples
    --------
    >>> rec = parse_nv_info(bytes.fromhex("040a0800 0d000000 60011800"))[0]
    >>> decode_param_cbank(rec)
    ParamCbank(symbol_index=13, offset=352, size=24)
    """
    _check_payload(record, 8, section, filename)
    symbol_index, packed = struct.unpack_from("<II", record.payload)
    return ParamCbank(symbol_index, packed & 0xFFFF, packed >> 16)


def decode_function_value(
    record: NvInfoRecord, *, section: str = ".nv.info", filename: str | None = None
) -> FunctionValue:
    """Decode a (symbol index, value) payload such as EIATTR_REGCOUNT or EIATTR_FRAME_SIZE."""
    _check_payload(record, 8, section, filename)
    return FunctionValue(*struct.unpack_from("<II", record.payload))


def decode_record(
    record: NvInfoRecord, *, section: str = ".nv.info", filename: str | None = None
) -> int | tuple[int, ...] | KernelParam | ParamCbank | FunctionValue | bytes | None:
    """The value of any record in its most useful form.

    KPARAM_INFO, PARAM_CBANK and the per-function values give their dataclasses; BVAL and
    HVAL give their integer, NVAL gives None; any other SVAL payload whose size is a multiple
    of four gives its 32-bit words (offset lists, MAX_THREADS, REQNTID, CUDA_API_VERSION...),
    and the rest gives the raw bytes.
    """
    if record.format != EIFMT_SVAL:
        return record.value
    if record.attribute == EIATTR["EIATTR_KPARAM_INFO"]:
        return decode_kparam_info(record, section=section, filename=filename)
    if record.attribute == EIATTR["EIATTR_KPARAM_INFO_V2"]:
        return decode_kparam_info_v2(record, section=section, filename=filename)
    if record.attribute == EIATTR["EIATTR_PARAM_CBANK"]:
        return decode_param_cbank(record, section=section, filename=filename)
    if record.attribute in FUNCTION_VALUE_ATTRIBUTES and len(record.payload) == 8:
        return decode_function_value(record, section=section, filename=filename)
    if len(record.payload) % 4 == 0:
        return record.words()
    return record.payload
