"""The ``kernelcheck_analyze`` fixture's function: static analysis of a file or of bytes."""

from __future__ import annotations

import os
import tempfile

__all__ = ["analyze"]


def analyze(source: str | os.PathLike | bytes, *, as_json: bool = False) -> tuple:
    """Analyse every kernel of a PTX, cubin, fatbin, executable or shared library.

    Parameters
    ----------
    source : path-like or bytes
        A file, or the bytes of a PTX text, cubin or fatbin image.
    as_json : bool
        Return :meth:`KernelSummary.to_json` dictionaries instead of summaries.

    Returns
    -------
    tuple
        One :class:`~kernelcheck.analysis.summary.KernelSummary` (or dict) per kernel, in
        module order.

    Raises
    ------
    KernelcheckError
        The input cannot be read at all, or none of its images could be analysed.

    Examples
    --------
    >>> s = analyze(b".version 8.0\\n.target sm_90\\n.address_size 64\\n"
    ...             b".visible .entry empty() { ret; }\\n")
    >>> s[0].name, s[0].kernel_class
    ('empty', 'always')
    """
    from kernelcheck.analysis.summary import analyze_module
    from kernelcheck.errors import KernelcheckError
    from kernelcheck.inputs import load_input

    if isinstance(source, bytes | bytearray | memoryview):
        data = bytes(source)
        suffix = ".bin" if data[:4] in (b"\x7fELF", b"\x50\xed\x55\xba") else ".ptx"
        with tempfile.TemporaryDirectory(prefix="kernelcheck-analyze-") as directory:
            path = os.path.join(directory, "image" + suffix)
            with open(path, "wb") as handle:
                handle.write(data)
            loaded = load_input(path)
    else:
        loaded = load_input(source)
    if not loaded.modules:
        raise KernelcheckError(f"{loaded.path}: nothing to analyse: "
                               f"{'; '.join(loaded.errors) or 'no kernels'}")
    summaries = tuple(s for m in loaded.modules for s in analyze_module(m.module))
    return tuple(s.to_json() for s in summaries) if as_json else summaries
