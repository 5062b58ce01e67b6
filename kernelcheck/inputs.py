"""Turn any file kernelcheck accepts into Kernel IR modules, saying where each came from.

A ``.ptx`` file is one module. A cubin, fatbin, host executable or shared library holds
several device images; each PTX image becomes a module and each cubin image is disassembled
into SASS and parsed into the same IR (when the SASS front end is available). An image that
cannot be read is reported in :attr:`LoadedInput.errors` and the others are still returned.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from kernelcheck.errors import KernelcheckError
from kernelcheck.ir.nodes import Module

__all__ = ["LoadedModule", "LoadedInput", "load_input", "load_ptx_modules"]


@dataclass(frozen=True)
class LoadedModule:
    """One module read from an input.

    ``language`` is ``"ptx"`` or ``"sass"``; ``origin`` says where in the input the image
    was (``"file"`` for a plain .ptx); ``note`` explains a choice, e.g. why SASS was
    analysed rather than PTX.
    """

    module: Module
    language: str
    arch: str | None
    origin: str
    note: str = ""


@dataclass(frozen=True)
class LoadedInput:
    """Every module read from one input file, and the images that could not be read."""

    path: str
    kind: str
    modules: tuple[LoadedModule, ...]
    errors: tuple[str, ...] = ()


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as error:
        raise KernelcheckError(f"{path}: cannot read: {error.strerror}") from error


def load_ptx_modules(path: str | os.PathLike, data: bytes | None = None) -> LoadedInput:
    """Parse a PTX file into one module."""
    from kernelcheck.ptx.parser import parse_ptx

    path = os.fspath(path)
    data = _read(path) if data is None else data
    module = parse_ptx(data, filename=path)
    return LoadedInput(path, "ptx", (LoadedModule(module, "ptx", module.arch, "file"),))


def load_input(path: str | os.PathLike, arch: str | None = None) -> LoadedInput:
    """Read ``path`` (PTX text, cubin, fatbin, executable or shared library).

    Parameters
    ----------
    path : path-like
        The file to read.
    arch : str, optional
        Keep only images for this architecture (``sm_90``); PTX images are kept when their
        target is ``arch`` or the matching ``compute_`` target.

    Returns
    -------
    LoadedInput

    Raises
    ------
    KernelcheckError
        When the file cannot be read at all (missing, not a format kernelcheck knows,
        malformed PTX).
    """
    from kernelcheck.binary.image import open_binary, sniff_kind

    path = os.fspath(path)
    data = _read(path)
    kind = sniff_kind(data)
    if kind == "ptx" or (kind == "unknown" and path.endswith(".ptx")):
        return load_ptx_modules(path, data)
    image = open_binary(data, filename=path)
    modules: list[LoadedModule] = []
    errors = [str(error) for error in image.errors]
    ptx_arches = set()
    for embedded in image.images:
        if embedded.kind != "ptx" or not _arch_matches(embedded.arch, arch):
            continue
        from kernelcheck.ptx.parser import parse_ptx

        where = embedded.origin.describe()
        try:
            module = parse_ptx(embedded.data, filename=f"{path}:{where}")
        except KernelcheckError as error:
            errors.append(f"{where}: {error}")
            continue
        ptx_arches.add(embedded.arch)
        modules.append(LoadedModule(module, "ptx", embedded.arch, where,
                                    "PTX embedded in the binary"))
    for embedded in image.images:
        if embedded.kind != "cubin" or not _arch_matches(embedded.arch, arch):
            continue
        where = embedded.origin.describe()
        try:
            loaded = _load_sass(embedded, where)
        except KernelcheckError as error:
            errors.append(f"{where}: {error}")
            continue
        if loaded is not None:
            modules.append(loaded)
    if not modules and not errors:
        errors.append("no device image for the requested architecture" if arch else
                      "no device image found")
    return LoadedInput(path, image.kind if hasattr(image, "kind") else kind, tuple(modules),
                       tuple(errors))


def _arch_matches(image_arch: str | None, wanted: str | None) -> bool:
    if wanted is None or image_arch is None:
        return True
    number = wanted.split("_", 1)[-1]
    return image_arch.split("_", 1)[-1].rstrip("af") == number.rstrip("af")


def _load_sass(embedded, where: str) -> LoadedModule | None:
    """Disassemble a cubin image into IR, or ``None`` when no SASS front end is installed."""
    try:
        from kernelcheck.sass.loader import module_from_cubin
    except ImportError:
        return None
    module = module_from_cubin(embedded.data, filename=where)
    return LoadedModule(module, "sass", embedded.arch, where, "SASS disassembled from the cubin")
