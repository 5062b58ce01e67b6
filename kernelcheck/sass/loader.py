"""A cubin image into a Kernel IR :class:`~kernelcheck.ir.nodes.Module` of SASS functions.

nvdisasm runs once per image (it is the slow part); every function it prints is then
parsed on its own, so one malformed function is reported as a :class:`FunctionFailure`
and the others are still returned (:func:`load_cubin_sass`). :func:`module_from_cubin`
is the strict form that raises on the first failure.

The module has ``target=(arch,)`` (e.g. ``("sm_90",)``), no PTX version, and
``address_size=64``. Kernels (``STO_CUDA_ENTRY`` symbols) are ``entry`` functions with
their parameters from EIATTR_KPARAM_INFO; other functions nvdisasm prints (device
functions compiled with ``-rdc``) are ``func`` with no parameters.
"""

from __future__ import annotations

import gc
import struct
from collections.abc import Collection
from dataclasses import dataclass

from kernelcheck.binary.cubin import CubinFile
from kernelcheck.binary.nvdisasm import SassFunction, disassemble
from kernelcheck.errors import KernelcheckError
from kernelcheck.ir.nodes import FileDirective, Function, Module
from kernelcheck.sass.calls import (
    BRANCH_TARGETS_DIRECTIVE,
    CBANK2_DIRECTIVE,
    CBANK_FUNCTIONS_DIRECTIVE,
    CBANK_OBJECTS_DIRECTIVE,
    decode_branch_targets,
)
from kernelcheck.sass.function import function_from_sass, label_for_offset
from kernelcheck.sass.params import PARAM_CBANK_DIRECTIVE, params_from_kparam_info

__all__ = ["FunctionFailure", "SassImage", "load_cubin_sass", "module_from_cubin",
           "functions_of_cubin", "local_code_symbols", "bank_functions", "bank_objects",
           "bank2_words"]


@dataclass(frozen=True, slots=True)
class FunctionFailure:
    """A function that could not be turned into IR, with the error."""

    name: str
    error: KernelcheckError

    @property
    def cause(self) -> str:
        """A short name of the failure kind, for grouping (e.g. ``SassSyntaxError``)."""
        return type(self.error).__name__


@dataclass(frozen=True)
class SassImage:
    """The SASS of one cubin image: the module of parsed functions and the failures."""

    module: Module
    failures: tuple[FunctionFailure, ...]
    arch: str


def local_code_symbols(cubin: CubinFile) -> dict[str, dict[str, int]]:
    """Code symbols per ``.text`` section: ``{section name: {symbol: offset}}``.

    Local subroutines (``$kernel$_Z6add_toPfif``, ``$__internal_0_$__cuda_sm20_div_u64``)
    live inside a kernel's section; their offsets place labels at ``CALL`` targets.
    """
    symtab = cubin.section_data(".symtab")
    strtab = cubin.section_data(".strtab")
    if not symtab or not strtab or not cubin.is_64bit:
        return {}
    by_index = {s.index: s.name for s in cubin.sections}
    result: dict[str, dict[str, int]] = {}
    for start in range(0, len(symtab) - 23, 24):
        name_at, info, _other, shndx, value, _size = struct.unpack_from("<IBBHQQ", symtab,
                                                                         start)
        if info & 0xF != 2:  # STT_FUNC
            continue
        section = by_index.get(shndx)
        if section is None or not section.startswith(".text."):
            continue
        end = strtab.find(b"\0", name_at)
        name = strtab[name_at:end if end >= 0 else None].decode("utf-8", "replace")
        result.setdefault(section, {})[name] = value
    return result


def functions_of_cubin(
    cubin: CubinFile,
    code: dict[str, SassFunction],
    *,
    filename: str | None = None,
    skip: Collection[str] = (),
) -> tuple[tuple[Function, ...], tuple[FunctionFailure, ...]]:
    """Parse every disassembled function of ``cubin`` (kernels first, in symbol order),
    except the kernels named in ``skip``.

    The cyclic garbage collector is paused while the functions are built: a library image
    yields millions of small acyclic IR objects, and the collector's repeated scans of them
    cost more than half of the parse.
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _functions_of_cubin(cubin, code, filename, frozenset(skip))
    finally:
        if collecting:
            gc.enable()


def bank_functions(cubin: CubinFile) -> tuple[tuple[int, int, str], ...]:
    """The function addresses constant bank 4 holds (see :mod:`kernelcheck.sass.calls`)."""
    functions = {name for name, _, kind, _ in cubin.symbols if kind == "STT_FUNC"}
    return tuple(sorted((4, offset, name) for offset, name in
                        cubin.constant_bank_symbols(4).items() if name in functions))


def bank_objects(cubin: CubinFile) -> tuple[tuple[int, int, str], ...]:
    """The addresses of module variables constant bank 4 holds (see
    :func:`kernelcheck.sass.calls.bank_objects`)."""
    objects = {name for name, _, kind, _ in cubin.symbols if kind == "STT_OBJECT"}
    return tuple(sorted((4, offset, name) for offset, name in
                        cubin.constant_bank_symbols(4).items() if name in objects))


def bank2_words(cubin: CubinFile, name: str) -> tuple[tuple[int, int], ...]:
    """``((offset, value), ...)``: the 32-bit words of the function's constant bank 2 (the
    compiler's constants, ``.nv.constant2.<name>``) that no relocation fills in."""
    section = f".nv.constant2.{name}"
    data = cubin.section_data(section)
    if not data:
        return ()
    relocated: set[int] = set()
    for offset, _, _, _ in cubin.relocations(section):
        relocated.update(range(offset - offset % 4, offset + 8, 4))
    return tuple((k, struct.unpack_from("<I", data, k)[0]) for k in range(0, len(data) - 3, 4)
                 if k not in relocated)


def _functions_of_cubin(cubin, code, filename, skip):
    symbols = local_code_symbols(cubin)
    files = _file_numbers(code)
    called = bank_functions(cubin)
    shared = ((CBANK_FUNCTIONS_DIRECTIVE, called),) if called else ()
    objects = bank_objects(cubin)
    shared += ((CBANK_OBJECTS_DIRECTIVE, objects),) if objects else ()
    kernels = {k.name: k for k in cubin.iter_kernels()}
    order = [n for n in kernels if n in code and n not in skip]
    order += [n for n in code if n not in kernels]
    functions: list[Function] = []
    failures: list[FunctionFailure] = []
    for name in order:
        kernel = kernels.get(name)
        params: tuple = ()
        directives: tuple = ()
        if kernel is not None:
            params = params_from_kparam_info(kernel.params)
            if kernel.param_base is not None:
                size = kernel.param_size
                if size is None:
                    size = max((p.offset + p.size for p in params), default=0)
                directives = ((PARAM_CBANK_DIRECTIVE, (0, kernel.param_base, size)),)
        directives += shared
        branches: tuple = ()
        if kernel is not None:
            for record in kernel.find(BRANCH_TARGETS_DIRECTIVE):
                branches += decode_branch_targets(record.payload)
        constants = bank2_words(cubin, name)
        if constants:
            directives += ((CBANK2_DIRECTIVE, constants),)
        labels = None
        if branches:
            directives += ((BRANCH_TARGETS_DIRECTIVE, branches),)
            labels = {t: (label_for_offset(t),) for _, targets in branches for t in targets}
        label = f"{filename or '<cubin>'}:{name}"
        try:
            functions.append(function_from_sass(
                code[name],
                kind="entry" if kernel is not None else "func",
                params=params,
                directives=directives,
                symbols=symbols.get(f".text.{name}"),
                labels=labels,
                filename=label,
                files=files,
            ))
        except KernelcheckError as error:
            failures.append(FunctionFailure(name, error))
    return tuple(functions), tuple(failures)


def load_cubin_sass(
    data: bytes,
    filename: str | None = None,
    *,
    code: dict[str, SassFunction] | None = None,
) -> SassImage:
    """Disassemble a cubin and parse its functions, keeping per-function failures.

    Parameters
    ----------
    data : bytes
        The (decompressed) cubin.
    filename : str, optional
        Names the image in errors (``lib.so:.nv_fatbin[0]#3 @0x1a0``).
    code : dict, optional
        nvdisasm's output for this image, when the caller already has it.

    Raises
    ------
    BinaryFormatError
        When the cubin itself cannot be read.
    NvdisasmError
        When nvdisasm is missing or fails on the image.
    """
    cubin = CubinFile(data, filename=filename)
    if code is None:
        code = disassemble(data, label=filename or "<cubin>",
                           line_info=has_line_info(cubin))
    functions, failures = functions_of_cubin(cubin, code, filename=filename)
    module = Module(version=None, target=(cubin.arch,), address_size=64,
                    items=source_files(code) + functions, filename=filename)
    return SassImage(module, failures, cubin.arch)


def has_line_info(cubin: CubinFile) -> bool:
    """Whether the cubin carries source lines (built with ``-lineinfo`` or ``-G``)."""
    return cubin.get_section(".debug_line") is not None


def source_files(code: dict[str, SassFunction]) -> tuple[FileDirective, ...]:
    """The source files the instructions' line information names, numbered from 1 in order
    of appearance (the numbering :func:`~kernelcheck.sass.function.function_from_sass`
    gives their ``SourceLoc.file``)."""
    return tuple(FileDirective(index, path) for path, index in _file_numbers(code).items())


def _file_numbers(code: dict[str, SassFunction]) -> dict[str, int]:
    numbers: dict[str, int] = {}
    for function in code.values():
        for instruction in function.instructions:
            if instruction.source is not None and instruction.source[0] not in numbers:
                numbers[instruction.source[0]] = len(numbers) + 1
    return numbers


def module_from_cubin(data: bytes, filename: str | None = None) -> Module:
    """The SASS of a cubin as a Kernel IR module; raises on the first failing function.

    Examples
    --------
    >>> m = module_from_cubin(open("fixtures/cubin/sm_90/gridstride.cubin", "rb").read())
    >>> m.arch, len(m.kernels) > 0
    ('sm_90', True)
    """
    image = load_cubin_sass(data, filename)
    if image.failures:
        raise image.failures[0].error
    return image.module
