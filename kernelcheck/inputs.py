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


def load_input(
    path: str | os.PathLike, arch: str | None = None, prefer: str = "sass"
) -> LoadedInput:
    """Read ``path`` (PTX text, cubin, fatbin, executable or shared library).

    Where an input holds both a cubin and PTX for the same architecture, ``prefer``
    decides which is analysed, and each module's :attr:`LoadedModule.note` says which and
    why. By default the SASS of the cubin is analysed, since it is the code that runs on
    that architecture; PTX is analysed for architectures no cubin in the input matches
    (the driver would JIT-compile it).

    Parameters
    ----------
    path : path-like
        The file to read.
    arch : str, optional
        Keep only images for this architecture (``sm_90``); PTX images are kept when their
        target is ``arch`` or the matching ``compute_`` target.
    prefer : {"sass", "ptx", "both"}
        Which form to analyse when both exist for an architecture.

    Returns
    -------
    LoadedInput

    Raises
    ------
    KernelcheckError
        When the file cannot be read at all (missing, not a format kernelcheck knows,
        malformed PTX). Failures of single images (a corrupt entry, nvdisasm failing on
        one cubin, a function that does not parse) are listed in ``errors`` instead.
    """
    from kernelcheck.binary.image import open_binary, sniff_kind

    if prefer not in ("sass", "ptx", "both"):
        raise ValueError(f"prefer must be 'sass', 'ptx' or 'both', not {prefer!r}")
    path = os.fspath(path)
    data = _read(path)
    kind = sniff_kind(data)
    if kind == "ptx" or (kind == "unknown" and path.endswith(".ptx")):
        return load_ptx_modules(path, data)
    image = open_binary(data, filename=path)
    errors = [str(error) for error in image.errors]
    wanted = [e for e in image.images if e.kind in ("ptx", "cubin")
              and _arch_matches(e.arch, arch)]
    cubin_arches = {_arch_key(e.arch) for e in wanted if e.kind == "cubin"}
    ptx_arches = {_arch_key(e.arch) for e in wanted if e.kind == "ptx"}
    modules: list[LoadedModule] = []
    for embedded in wanted:
        key = _arch_key(embedded.arch)
        where = embedded.origin.describe()
        if embedded.kind == "ptx":
            if key in cubin_arches and prefer == "sass":
                continue
            note = _ptx_note(embedded.arch, key in cubin_arches)
            loaded = _load_ptx(embedded, path, where, note, errors)
        else:
            if key in ptx_arches and prefer == "ptx":
                continue
            loaded = _load_sass(embedded, path, where, key in ptx_arches, prefer, errors)
        if loaded is not None:
            modules.append(loaded)
    if not modules and not errors:
        errors.append("no device image for the requested architecture" if arch else
                      "no device image found")
    return LoadedInput(path, image.kind if hasattr(image, "kind") else kind, tuple(modules),
                       tuple(errors))


def _arch_key(image_arch: str | None) -> str:
    """``sm_90a``, ``compute_90`` → ``90``: the architecture a cubin or PTX is for."""
    if image_arch is None:
        return "?"
    return image_arch.split("_", 1)[-1].rstrip("af")


def _ptx_note(image_arch: str, has_cubin: bool) -> str:
    if has_cubin:
        return (f"PTX for {image_arch} analysed on request; the input also holds a cubin "
                f"for it, whose SASS is what runs")
    return (f"PTX analysed: no cubin for {image_arch} in the input, so this PTX is what the "
            f"driver JIT-compiles")


def _load_ptx(embedded, path: str, where: str, note: str, errors: list[str]):
    from kernelcheck.ptx.parser import parse_ptx

    try:
        module = parse_ptx(embedded.data, filename=f"{path}:{where}")
    except KernelcheckError as error:
        errors.append(f"{where}: {error}")
        return None
    return LoadedModule(module, "ptx", embedded.arch, where, note)


def _arch_matches(image_arch: str | None, wanted: str | None) -> bool:
    if wanted is None or image_arch is None:
        return True
    number = wanted.split("_", 1)[-1]
    return image_arch.split("_", 1)[-1].rstrip("af") == number.rstrip("af")


def _load_sass(embedded, path: str, where: str, has_ptx: bool, prefer: str,
               errors: list[str]) -> LoadedModule | None:
    """Disassemble a cubin image into IR; failures go to ``errors`` naming file and image."""
    from kernelcheck.sass.loader import load_cubin_sass

    try:
        image = load_cubin_sass(embedded.data, filename=f"{path}:{where}")
    except KernelcheckError as error:
        text = str(error)
        errors.append(text if text.startswith(f"{path}:{where}") else
                      f"{path}:{where}: {text}")
        return None
    for failure in image.failures:
        errors.append(f"{where}: kernel {failure.name} not analysed: {failure.error}")
    if has_ptx and prefer == "sass":
        note = (f"SASS of the {embedded.arch} cubin analysed: it is the code that runs on "
                f"{embedded.arch}; the PTX for the same architecture in this input was not "
                f"analysed (--prefer ptx selects it)")
    elif has_ptx:
        note = f"SASS of the {embedded.arch} cubin analysed beside its PTX (--prefer both)"
    else:
        note = f"SASS disassembled from the {embedded.arch} cubin (no PTX for it in the input)"
    return LoadedModule(image.module, "sass", embedded.arch, where, note)
