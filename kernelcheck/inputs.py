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

__all__ = ["LoadedModule", "LoadedInput", "InputFile", "expand_inputs", "load_input",
           "load_ptx_modules"]

#: Bytes read to tell what a file found in a directory is.
_SNIFF_BYTES = 1 << 16
#: The fatbin header magic (0xBA55ED50, little-endian) that host binaries with device code
#: carry in their .nv_fatbin section.
_FATBIN_MAGIC = b"\x50\xed\x55\xba"


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
    except IsADirectoryError:
        raise KernelcheckError(f"{path}: is a directory (give the files, or the directory "
                               f"to a command that searches it)") from None
    except OSError as error:
        raise KernelcheckError(f"{path}: cannot read: {error.strerror}") from None


@dataclass(frozen=True)
class InputFile:
    """One input: its name in reports, and its bytes when they were read already (stdin)."""

    path: str
    data: bytes | None = None

    def read(self) -> bytes:
        return self.data if self.data is not None else _read(self.path)


def _device_code(path: str) -> bool:
    """Whether a file met in a directory holds something kernelcheck analyses: PTX text, a
    cubin, a fatbin, or a host binary with an embedded fatbin."""
    from kernelcheck.binary.image import sniff_kind

    try:
        with open(path, "rb") as handle:
            head = handle.read(_SNIFF_BYTES)
            kind = sniff_kind(head)
            if kind in ("ptx", "cubin", "fatbin"):
                return True
            if kind != "host-elf":
                return False
            handle.seek(0)
            return _FATBIN_MAGIC in handle.read()
    except OSError:
        return False


def expand_inputs(paths, stdin=None) -> list[InputFile]:
    """The input files that ``paths`` name, in order.

    A file is taken as it is; a directory is searched recursively (sorted, hidden entries
    skipped) for PTX text, cubins, fatbins and host binaries that embed device code, told
    by their content, not their name; a pattern with ``*``, ``?`` or ``[`` that names no
    file is expanded as a glob (``**`` recursive); ``-`` is standard input (once).

    Raises
    ------
    KernelcheckError
        A path that does not exist, a directory without device code, ``-`` twice.
    """
    import glob
    import sys

    found: list[InputFile] = []
    took_stdin = False
    for path in paths:
        if path == "-":
            if took_stdin:
                raise KernelcheckError("-: standard input can be read only once")
            took_stdin = True
            stream = stdin if stdin is not None else sys.stdin.buffer
            found.append(InputFile("<stdin>", stream.read()))
            continue
        if os.path.isdir(path):
            inside = []
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in sorted(files):
                    full = os.path.join(root, name)
                    if not name.startswith(".") and os.path.isfile(full) and \
                            _device_code(full):
                        inside.append(InputFile(full))
            if not inside:
                raise KernelcheckError(f"{path}: no PTX, cubin, fatbin or binary with device "
                                       f"code in this directory")
            found.extend(inside)
            continue
        if not os.path.exists(path) and any(c in path for c in "*?["):
            matches = sorted(m for m in glob.glob(path, recursive=True) if os.path.isfile(m))
            if not matches:
                raise KernelcheckError(f"{path}: no file matches this pattern")
            found.extend(InputFile(m) for m in matches)
            continue
        if not os.path.exists(path):
            raise KernelcheckError(f"{path}: no such file or directory")
        found.append(InputFile(path))
    return found


def load_ptx_modules(path: str | os.PathLike, data: bytes | None = None) -> LoadedInput:
    """Parse a PTX file into one module."""
    from kernelcheck.ptx.parser import parse_ptx

    path = os.fspath(path)
    data = _read(path) if data is None else data
    module = parse_ptx(data, filename=path)
    return LoadedInput(path, "ptx", (LoadedModule(module, "ptx", module.arch, "file"),))


def load_input(
    path: str | os.PathLike, arch: str | None = None, prefer: str = "sass",
    data: bytes | None = None,
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
    data : bytes, optional
        The file's bytes, when they were read already (``path`` then only names them).

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
    data = _read(path) if data is None else data
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
