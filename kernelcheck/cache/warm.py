"""``kernelcheck analyze --warm-cache FILE``: fill the analysis cache ahead of a run.

The cache key of an image is the SHA-256 of the bytes the program hands the driver, plus an
architecture: ``"any"`` for a PTX module or a single cubin (their code does not depend on
the device that loads them), the device's ``sm_XY`` for a fatbin (the driver picks the entry
for that device). A PTX or cubin file is therefore warmed as it is; a fatbin once per
architecture of its cubin entries (or the one given with ``--arch``).
"""

from __future__ import annotations

import os
import sys

from kernelcheck.cache.store import AnalysisCache, image_hash
from kernelcheck.errors import KernelcheckError

__all__ = ["ANY_ARCH", "warm_cache", "warm_cache_command"]

ANY_ARCH = "any"


def warm_cache(path: str | os.PathLike, arch: str | None = None,
               cache: AnalysisCache | None = None) -> tuple[tuple[str, str, int], ...]:
    """Analyse ``path`` into the cache; returns ``(image hash, arch, kernels stored)`` rows.

    Raises
    ------
    KernelcheckError
        The file cannot be read or is a kind whose launch-time image is not the file itself
        (a host executable or library: warm its fatbins instead).
    """
    from kernelcheck.binary.image import sniff_kind
    from kernelcheck.shim.helper import analyze_image

    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as error:
        raise KernelcheckError(f"{path}: cannot read: {error.strerror}") from error
    kind = sniff_kind(data)
    if kind in ("ptx", "cubin"):
        arches = [ANY_ARCH]
    elif kind == "fatbin":
        if arch:
            arches = [arch]
        else:
            from kernelcheck.binary.fatbin import parse_fatbin
            arches = sorted({f"sm_{e.arch_number}" for e in parse_fatbin(data).entries
                             if e.kind_name == "cubin"})
    else:
        raise KernelcheckError(f"{path}: a {kind} file is not a module image the driver is "
                               f"given; warm the cache with its .ptx, .cubin or fatbin")
    own = cache is None
    cache = cache or AnalysisCache()
    try:
        rows = []
        for a in arches:
            n = analyze_image(cache, data, a)
            status = cache.image_status(image_hash(data), a)
            if status is not None and status[0] == "failed":
                raise KernelcheckError(f"{path}: analysis failed: {status[1]}")
            rows.append((image_hash(data), a, n))
        return tuple(rows)
    finally:
        if own:
            cache.close()


def warm_cache_command(path: str, arch: str | None) -> int:
    """The ``--warm-cache`` code path of ``kernelcheck analyze``."""
    for digest, a, n in warm_cache(path, arch):
        print(f"{path}: {n} kernels cached (image {digest[:16]}, arch {a})", file=sys.stdout)
    return 0
