"""The module images a file hands the CUDA driver, under the key the shim looks them up by.

The shim keys an analysis by the SHA-256 of the image the program passes to the driver and
an architecture (docs/shim.md, "First sight"): a PTX file or a single cubin is its own image,
under ``any``; a fatbin is one image per architecture of its cubin entries, under ``sm_XY``
(the driver picks the entry for the device). A host executable or library hands the driver
each fatbin of its ``.nv_fatbin`` section (through ``__fatbinwrap``), so each of those is an
image of its own, keyed by the hash of exactly the fatbin's bytes (header and entries).
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass

from kernelcheck.cache.store import image_hash
from kernelcheck.errors import KernelcheckError

__all__ = ["ANY_ARCH", "ShippedImage", "shipped_images"]

ANY_ARCH = "any"


@dataclass(frozen=True, slots=True)
class ShippedImage:
    """One image as the driver sees it, with its cache key and where it was found."""

    file: str
    origin: str
    kind: str
    arch: str
    image_hash: str
    data: bytes


def _fatbin_images(file: str, origin: str, span: bytes, arch: str | None) -> list[ShippedImage]:
    from kernelcheck.binary.fatbin import parse_fatbin

    fatbin = parse_fatbin(span, 0, filename=file)
    if fatbin.errors:
        # A truncated or corrupt fatbin: shipping part of it would leave its other kernels
        # silently unanalysed on every node.
        raise KernelcheckError(f"{origin}: {fatbin.errors[0]}")
    arches = sorted({f"sm_{e.arch_number}" for e in fatbin.entries if e.kind_name == "cubin"})
    digest = image_hash(span)
    return [ShippedImage(file, origin, "fatbin", a, digest, span) for a in arches
            if arch is None or a == arch]


def shipped_images(path: str | os.PathLike, arch: str | None = None) -> list[ShippedImage]:
    """The images ``path`` hands the driver, keyed as the shim keys them.

    Parameters
    ----------
    path : path
        A ``.ptx``, ``.cubin``, fatbin, host executable or shared library.
    arch : str, optional
        Only fatbin entries for this architecture (``sm_90``); PTX and cubin files are
        architecture-independent keys (``any``) and always included.

    Raises
    ------
    KernelcheckError
        The file cannot be read or is of no known kind.
    """
    from kernelcheck.binary.image import sniff_kind

    file = os.fspath(path)
    try:
        with open(file, "rb") as handle:
            data = handle.read()
    except OSError as error:
        raise KernelcheckError(f"{file}: cannot read: {error.strerror}") from error
    kind = sniff_kind(data)
    if kind in ("ptx", "cubin"):
        return [ShippedImage(file, "file", kind, ANY_ARCH, image_hash(data), data)]
    if kind == "fatbin":
        from kernelcheck.binary.fatbin import iter_fatbins

        out = []
        for index, item in enumerate(iter_fatbins(data, filename=file)):
            if isinstance(item, Exception):
                raise KernelcheckError(f"{item}")
            span = data[item.header.offset:item.header.end]
            out += _fatbin_images(file, f"fatbin[{index}]", span, arch)
        return out
    if kind == "host-elf":
        return _host_images(file, data, arch)
    raise KernelcheckError(f"{file}: a {kind} file holds no module image for the driver")


def _host_images(file: str, data: bytes, arch: str | None) -> list[ShippedImage]:
    from elftools.elf.elffile import ELFFile

    from kernelcheck.binary.hostelf import find_fatbins

    found, _ = find_fatbins(data, filename=file)
    elf = ELFFile(io.BytesIO(data))
    sections: dict[str, bytes] = {}
    out: list[ShippedImage] = []
    counters: dict[str, int] = {}
    for host in found:
        if host.section == "__nv_relfatbin":
            continue  # relocatable device code: linked by nvlink, never loaded as it is
        if host.section not in sections:
            sections[host.section] = elf.get_section_by_name(host.section).data()
        header = host.fatbin.header
        start = host.section_offset
        span = sections[host.section][start:start + header.header_size + header.fat_size]
        index = counters.get(host.section, 0)
        counters[host.section] = index + 1
        out += _fatbin_images(file, f"{host.section}[{index}] @0x{start:x}", span, arch)
    return out
