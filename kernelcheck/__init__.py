"""kernelcheck: static and launch-time idempotency analysis of CUDA kernels.

Importing this package is cheap: it does not import z3, torch or any CUDA library. The
public names below are loaded lazily on first use.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__version__ = "0.1.0"

_LAZY = {
    "parse_ptx": "kernelcheck.ptx.parser",
    "parse_ptx_file": "kernelcheck.ptx.parser",
    "print_ptx": "kernelcheck.ptx.printer",
    "KernelcheckError": "kernelcheck.errors",
    "PtxSyntaxError": "kernelcheck.errors",
    "BinaryFormatError": "kernelcheck.errors",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'kernelcheck' has no attribute {name!r}")
    return getattr(import_module(module), name)
