"""The cubin facade: one CUDA device ELF and its kernels.

:class:`CubinFile` reads the whole image eagerly with pyelftools (sections, symbols,
``.nv.info``, ``.nv.compat``, ``.note.nv.cuinfo``) and converts every parsing failure into a
:class:`~kernelcheck.errors.BinaryFormatError` naming the file, the section and the offset,
so nothing else escapes from a corrupt input. Each kernel (a ``STT_FUNC`` symbol marked
``STO_CUDA_ENTRY``) becomes a :class:`CubinKernel` with its code, parameter layout,
constant-bank-0 parameter base and attributes.

The SM architecture comes from ``e_flags``. Two encodings exist: up to ELF ABI version 7
(``EI_OSABI`` 0x33) the SM number is bits 0..7 and ``EF_CUDA_ACCELERATORS`` (0x800) marks
``sm_90a``; from ABI version 8 (``EI_OSABI`` 0x41, CUDA 12.9 and later) the SM number is bits
8..15 and the "a" variant is only recorded in ``.nv.compat`` as
EICOMPAT_ATTR_CUDA_ACCELERATOR_TARGET = 1 (checked against ``cuobjdump -elf``, which prints
``sm=90a``, for sm_75..sm_121 built by CUDA 13.0).
"""

from __future__ import annotations

import io
import struct
from collections.abc import Iterator
from dataclasses import dataclass

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

from kernelcheck.binary.demangle import demangle
from kernelcheck.binary.eiattr import EIATTR
from kernelcheck.binary.nvinfo import (
    FUNCTION_VALUE_ATTRIBUTES,
    KernelParam,
    NvInfoRecord,
    decode_function_value,
    decode_kparam_info,
    decode_kparam_info_v2,
    decode_param_cbank,
    parse_nv_info,
)
from kernelcheck.errors import BinaryFormatError

__all__ = ["EM_CUDA", "STO_CUDA_ENTRY", "CubinSection", "CubinKernel", "CubinFile"]

EM_CUDA = 190
STO_CUDA_ENTRY = 0x10
EF_CUDA_ACCELERATORS_V7 = 0x800
_COMPAT_ACCELERATOR_TARGET = 0x09
#: Errors pyelftools (and the struct reads under it) raise on malformed input.
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
class CubinSection:
    """A section header, by name, with its file offset and size."""

    index: int
    name: str
    type: str
    offset: int
    size: int
    flags: int
    link: int
    info: int


@dataclass(frozen=True, slots=True)
class CubinKernel:
    """One kernel of a cubin.

    Attributes
    ----------
    name, demangled : str
        The ELF symbol and its demangled form (see :mod:`kernelcheck.binary.demangle`).
    symbol_index : int
        Index of the kernel's symbol.
    text : bytes
        The SASS machine code of ``.text.<name>``; `text_offset` is its file offset.
    params : tuple of KernelParam
        EIATTR_KPARAM_INFO records (EIATTR_KPARAM_INFO_V2 where the parameters pass
        4 KB) sorted by ordinal.
    param_base : int or None
        Offset of the first parameter in constant bank 0 (EIATTR_PARAM_CBANK), e.g. 0x160
        on sm_80 and 0x210 on sm_90.
    param_size : int or None
        EIATTR_CBANK_PARAM_SIZE, the bytes of parameters.
    cbank0_size : int or None
        Size of ``.nv.constant0.<name>``.
    attributes : tuple of NvInfoRecord
        The records of ``.nv.info.<name>``, in file order.
    image_attributes : tuple of NvInfoRecord
        The records of ``.nv.info`` that name this kernel's symbol (REGCOUNT, FRAME_SIZE...).
    """

    name: str
    demangled: str
    symbol_index: int
    text: bytes
    text_offset: int
    params: tuple[KernelParam, ...]
    param_base: int | None
    param_size: int | None
    cbank0_size: int | None
    attributes: tuple[NvInfoRecord, ...]
    image_attributes: tuple[NvInfoRecord, ...]

    def find(self, name: str) -> tuple[NvInfoRecord, ...]:
        """Every record of attribute `name` (e.g. ``"EIATTR_EXIT_INSTR_OFFSETS"``)."""
        number = EIATTR[name]
        return tuple(r for r in self.attributes + self.image_attributes if r.attribute == number)

    def _words(self, name: str) -> tuple[int, ...] | None:
        records = self.find(name)
        return tuple(w for r in records for w in r.words()) if records else None

    def _function_value(self, name: str) -> int | None:
        for record in self.find(name):
            if len(record.payload) >= 8:
                return decode_function_value(record).value
        return None

    @property
    def exit_offsets(self) -> tuple[int, ...]:
        """Byte offsets of the EXIT instructions in `text` (EIATTR_EXIT_INSTR_OFFSETS)."""
        return self._words("EIATTR_EXIT_INSTR_OFFSETS") or ()

    @property
    def max_threads(self) -> tuple[int, ...] | None:
        """EIATTR_MAX_THREADS (``__launch_bounds__``/``.maxntid``) as (x, y, z), or None."""
        return self._words("EIATTR_MAX_THREADS")

    @property
    def reqntid(self) -> tuple[int, ...] | None:
        """EIATTR_REQNTID (``.reqntid``) as (x, y, z), or None."""
        return self._words("EIATTR_REQNTID")

    @property
    def num_barriers(self) -> int:
        """EIATTR_NUM_BARRIERS, 0 when absent."""
        records = self.find("EIATTR_NUM_BARRIERS")
        return records[0].value or 0 if records else 0

    @property
    def regcount(self) -> int | None:
        """Registers per thread (EIATTR_REGCOUNT of ``.nv.info``)."""
        return self._function_value("EIATTR_REGCOUNT")

    @property
    def frame_size(self) -> int | None:
        """Local-memory frame size in bytes (EIATTR_FRAME_SIZE)."""
        return self._function_value("EIATTR_FRAME_SIZE")

    @property
    def max_stack_size(self) -> int | None:
        """EIATTR_MAX_STACK_SIZE, when the image has one for this kernel."""
        return self._function_value("EIATTR_MAX_STACK_SIZE")

    @property
    def min_stack_size(self) -> int | None:
        """EIATTR_MIN_STACK_SIZE, when the image has one for this kernel."""
        return self._function_value("EIATTR_MIN_STACK_SIZE")

    @property
    def cuda_api_version(self) -> int | None:
        """EIATTR_CUDA_API_VERSION (e.g. 130 for CUDA 13.0), or None."""
        words = self._words("EIATTR_CUDA_API_VERSION")
        return words[0] if words else None


class CubinFile:
    """A CUDA device ELF (cubin) read from bytes.

    Parameters
    ----------
    data : bytes
        The whole ELF image.
    filename : str, optional
        Used in error messages.

    Raises
    ------
    BinaryFormatError
        When the image is not a well-formed ELF, its machine is not EM_CUDA (190), or one
        of its sections or ``.nv.info`` records is corrupt.

    Examples
    --------
    >>> cubin = CubinFile(open("tests/binary/data/k80.cubin", "rb").read())  # doctest: +SKIP
    >>> cubin.arch, cubin.get_kernel("saxpy").param_base  # doctest: +SKIP
    ('sm_80', 352)
    """

    def __init__(self, data: bytes, filename: str | None = None) -> None:
        self.data = bytes(data)
        self.filename = filename
        self._check_ident()
        try:
            self._read()
        except BinaryFormatError:
            raise
        except _PARSE_ERRORS as error:
            raise BinaryFormatError(
                f"malformed ELF: {type(error).__name__}: {error}", filename=filename
            ) from error

    # -- reading -------------------------------------------------------------------------
    def _error(self, message: str, section: str | None = None, offset: int | None = None):
        return BinaryFormatError(message, filename=self.filename, section=section, offset=offset)

    def _check_ident(self) -> None:
        data = self.data
        if len(data) < 52 or data[:4] != b"\x7fELF":
            raise self._error(
                f"not an ELF file ({len(data)} bytes, starts {data[:4].hex()})", offset=0
            )
        if data[4] not in (1, 2) or data[5] not in (1, 2):
            raise self._error(f"bad ELF class {data[4]} or data encoding {data[5]}", offset=4)
        if data[4] == 2 and len(data) < 64:
            raise self._error(f"truncated ELF header: {len(data)} bytes, need 64", offset=0)
        endian = "<" if data[5] == 1 else ">"
        (machine,) = struct.unpack_from(endian + "H", data, 18)
        if machine != EM_CUDA:
            raise self._error(
                f"ELF machine is {machine}, expected EM_CUDA ({EM_CUDA}): not a cubin", offset=18
            )
        if data[4] == 2:
            (shoff,) = struct.unpack_from(endian + "Q", data, 0x28)
            shentsize, shnum = struct.unpack_from(endian + "HH", data, 0x3A)
        else:
            (shoff,) = struct.unpack_from(endian + "I", data, 0x20)
            shentsize, shnum = struct.unpack_from(endian + "HH", data, 0x2E)
        if shoff + shentsize * shnum > len(data):
            raise self._error(
                f"section header table ({shnum} x {shentsize} bytes at 0x{shoff:x}) runs past "
                f"the end of the file ({len(data)} bytes)",
                offset=shoff,
            )

    def _read(self) -> None:
        elf = ELFFile(io.BytesIO(self.data))
        header = elf.header
        self.e_flags: int = header["e_flags"]
        self.abi_version: int = header["e_ident"]["EI_ABIVERSION"]
        self.osabi = header["e_ident"]["EI_OSABI"]
        self.elf_type: str = header["e_type"]
        self.is_64bit: bool = elf.elfclass == 64
        sections = []
        contents: dict[str, bytes] = {}
        for index, section in enumerate(elf.iter_sections()):
            name = section.name
            kind = section["sh_type"]
            kind = kind if isinstance(kind, str) else f"SHT_0x{kind:x}"
            item = CubinSection(
                index,
                name,
                kind,
                section["sh_offset"],
                section["sh_size"],
                section["sh_flags"],
                section["sh_link"],
                section["sh_info"],
            )
            sections.append(item)
            if kind != "SHT_NOBITS" and item.size:
                if item.offset + item.size > len(self.data):
                    raise self._error(
                        f"section data (0x{item.size:x} bytes at 0x{item.offset:x}) runs past "
                        f"the end of the file ({len(self.data)} bytes)",
                        name,
                        item.offset,
                    )
                contents.setdefault(name, self.data[item.offset : item.offset + item.size])
        self.sections: tuple[CubinSection, ...] = tuple(sections)
        self._contents = contents
        self._by_name = {s.name: s for s in reversed(sections)}
        self.symbols = self._read_symbols(elf)
        self.image_attributes = self._records(".nv.info")
        self.compat_attributes = self._records(".nv.compat")
        self.virtual_arch, self.toolkit_version = self._read_cuinfo()
        self.arch = self._decode_arch()
        self._kernels = self._read_kernels()

    def _read_symbols(self, elf: ELFFile) -> tuple[tuple[str, int, str, int], ...]:
        """(name, section index, type, st_other) per symbol; st_other is read raw because
        pyelftools keeps only its visibility bits, and STO_CUDA_ENTRY lives above them."""
        symtab = elf.get_section_by_name(".symtab")
        if symtab is None:
            return ()
        raw = self._contents.get(".symtab", b"")
        entry_size = 24 if self.is_64bit else 16
        other_at = 5 if self.is_64bit else 13
        result = []
        for number, symbol in enumerate(symtab.iter_symbols()):
            other_offset = number * entry_size + other_at
            other = raw[other_offset] if other_offset < len(raw) else 0
            shndx = symbol["st_shndx"]
            result.append(
                (
                    symbol.name,
                    shndx if isinstance(shndx, int) else -1,
                    symbol["st_info"]["type"],
                    other,
                )
            )
        return tuple(result)

    def _records(self, name: str) -> tuple[NvInfoRecord, ...]:
        data = self._contents.get(name)
        if data is None:
            return ()
        return parse_nv_info(data, section=name, filename=self.filename)

    def _read_cuinfo(self) -> tuple[str | None, str | None]:
        note = self._contents.get(".note.nv.cuinfo", b"")
        # namesz, descsz, type, "NVIDIA Corp\0", then u16 version, u16 virtual SM, u32 toolkit.
        if len(note) < 12:
            return None, None
        namesz, descsz, _ = struct.unpack_from("<III", note)
        desc = 12 + ((namesz + 3) & ~3)
        if descsz < 8 or desc + 8 > len(note):
            return None, None
        _, virtual, toolkit = struct.unpack_from("<HHI", note, desc)
        return f"compute_{virtual}", f"{toolkit // 10}.{toolkit % 10}"

    def _decode_arch(self) -> str:
        flags = self.e_flags
        if self.abi_version >= 8:
            number = (flags >> 8) & 0xFF
            accelerated = any(
                r.attribute == _COMPAT_ACCELERATOR_TARGET and r.value == 1
                for r in self.compat_attributes
            )
        else:
            number = flags & 0xFF
            accelerated = bool(flags & EF_CUDA_ACCELERATORS_V7)
        return f"sm_{number}" + ("a" if accelerated else "")

    def _read_kernels(self) -> dict[str, CubinKernel]:
        kernels: dict[str, CubinKernel] = {}
        by_symbol: dict[int, list[NvInfoRecord]] = {}
        for record in self.image_attributes:
            if record.attribute in FUNCTION_VALUE_ATTRIBUTES and len(record.payload) >= 4:
                by_symbol.setdefault(record.words()[0], []).append(record)
        for number, (name, _shndx, kind, other) in enumerate(self.symbols):
            if kind != "STT_FUNC" or not other & STO_CUDA_ENTRY:
                continue
            text_name = f".text.{name}"
            text_section = self._by_name.get(text_name)
            if text_section is None:
                raise self._error(f"kernel {name} has no {text_name} section", ".symtab")
            info_name = f".nv.info.{name}"
            attributes = self._records(info_name)
            params, param_base, param_size = [], None, None
            for record in attributes:
                if record.attribute == EIATTR["EIATTR_KPARAM_INFO"]:
                    params.append(
                        decode_kparam_info(record, section=info_name, filename=self.filename)
                    )
                elif record.attribute == EIATTR["EIATTR_KPARAM_INFO_V2"]:
                    params.append(
                        decode_kparam_info_v2(record, section=info_name, filename=self.filename)
                    )
                elif record.attribute == EIATTR["EIATTR_PARAM_CBANK"]:
                    param_base = decode_param_cbank(
                        record, section=info_name, filename=self.filename
                    ).offset
                elif record.attribute == EIATTR["EIATTR_CBANK_PARAM_SIZE"]:
                    param_size = record.value
            constant0 = self._by_name.get(f".nv.constant0.{name}")
            kernels[name] = CubinKernel(
                name=name,
                demangled=demangle(name),
                symbol_index=number,
                text=self._contents.get(text_name, b""),
                text_offset=text_section.offset,
                params=tuple(sorted(params, key=lambda p: p.ordinal)),
                param_base=param_base,
                param_size=param_size,
                cbank0_size=constant0.size if constant0 else None,
                attributes=attributes,
                image_attributes=tuple(by_symbol.get(number, ())),
            )
        return kernels

    # -- the friendly API ----------------------------------------------------------------
    @property
    def num_kernels(self) -> int:
        """How many kernels (entry functions) the image holds."""
        return len(self._kernels)

    def kernel_names(self) -> tuple[str, ...]:
        """The kernels' symbol names, in symbol-table order."""
        return tuple(self._kernels)

    def get_kernel(self, name: str) -> CubinKernel:
        """The kernel whose symbol (or demangled name) is `name`; KeyError if none."""
        if name in self._kernels:
            return self._kernels[name]
        for kernel in self._kernels.values():
            if kernel.demangled == name:
                return kernel
        raise KeyError(f"no kernel {name!r} in {self.filename or 'the cubin'}")

    def iter_kernels(self) -> Iterator[CubinKernel]:
        """Every kernel, in symbol-table order."""
        return iter(self._kernels.values())

    def get_section(self, name: str) -> CubinSection | None:
        """The first section called `name`, or None."""
        return self._by_name.get(name)

    def section_data(self, name: str) -> bytes | None:
        """The contents of the first section called `name` (None if absent or NOBITS)."""
        return self._contents.get(name)

    def relocations(self, section: str) -> tuple[tuple[int, int, str, int], ...]:
        """The relocations applied to ``section``: ``(offset, type, symbol, addend)`` each.

        They are read from ``.rela<section>`` (or ``.rel<section>``, addend 0); an entry
        whose symbol index is out of range names the symbol ``""``. A relocation table that
        is not a whole number of entries raises :class:`BinaryFormatError`.

        Examples
        --------
        >>> c = CubinFile(open("fixtures/cubin/sm_90/elementwise.cubin", "rb").read())
        >>> c.relocations(".nv.constant4")
        ()
        """
        found = []
        for prefix, size in ((".rela", 24), (".rel", 16)):
            name = prefix + section
            data = self._contents.get(name)
            if not data or not self.is_64bit:
                continue
            if len(data) % size:
                raise self._error(f"relocation table of {len(data)} bytes is not a whole "
                                  f"number of {size}-byte entries", name)
            for start in range(0, len(data), size):
                offset, info = struct.unpack_from("<QQ", data, start)
                addend = struct.unpack_from("<q", data, start + 16)[0] if size == 24 else 0
                index = info >> 32
                symbol = self.symbols[index][0] if index < len(self.symbols) else ""
                found.append((offset, info & 0xFFFFFFFF, symbol, addend))
        return tuple(found)

    def constant_bank_symbols(self, bank: int = 4) -> dict[int, str]:
        """``{offset: symbol}`` for the doublewords of a module constant bank that hold
        an address the loader fills in (bank 4 holds the addresses of the functions and
        strings the code calls or passes: ``__assertfail``, ``vprintf``, ``$str``)."""
        return {offset: symbol for offset, _, symbol, addend in
                self.relocations(f".nv.constant{bank}") if addend == 0 and symbol}

    def __repr__(self) -> str:
        return f"<CubinFile {self.filename or ''} {self.arch} {self.num_kernels} kernels>"
