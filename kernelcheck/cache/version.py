"""The analyzer version cached entries carry: the package version plus a hash of the
analysis code, so that any change to how verdicts are computed invalidates old entries."""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

__all__ = ["analyzer_version"]

#: Packages whose source decides verdicts.
_ANALYSIS_PACKAGES = ("analysis", "launch", "ptx", "ir", "sass", "binary")


@cache
def analyzer_version() -> str:
    """``"<version>+<12 hex digits>"`` over the analysis sources (stable within a checkout).

    Examples
    --------
    >>> analyzer_version().split("+")[0] != ""
    True
    """
    from kernelcheck import __version__

    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for package in _ANALYSIS_PACKAGES:
        for path in sorted((root / package).glob("*.py")):
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return f"{__version__}+{digest.hexdigest()[:12]}"
