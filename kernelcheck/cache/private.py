"""The cache's trust boundary: a directory and files private to the user.

Cached verdicts decide what recovery may skip saving, so anyone who can write the cache can
make kernelcheck call a clobbering launch idempotent. The cache directory must be owned by
the user with mode 0700 and every file in it by the user with no group or other access;
anything else is refused with :class:`CachePermissionError` (the C shim applies the same
rule and falls back to "not proven").
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from kernelcheck.errors import KernelcheckError

__all__ = ["CachePermissionError", "cache_dir", "ensure_private_dir", "check_private_file"]


class CachePermissionError(KernelcheckError):
    """The cache directory or a file in it is not private to the user."""


def cache_dir() -> Path:
    """``$KERNELCHECK_CACHE_DIR``, else ``~/.cache/kernelcheck`` (not created here)."""
    explicit = os.environ.get("KERNELCHECK_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(base) / "kernelcheck"


def _check(path: Path, info: os.stat_result, kind: str) -> None:
    if info.st_uid != os.geteuid():
        raise CachePermissionError(f"{path}: owned by uid {info.st_uid}, not by this user "
                                   f"(uid {os.geteuid()}): refusing to use the {kind}")
    if info.st_mode & 0o077:
        raise CachePermissionError(f"{path}: mode {stat.S_IMODE(info.st_mode):03o} lets others "
                                   f"in (expected 0700 for a directory, 0600 for a file): "
                                   f"refusing to use the {kind}")


def ensure_private_dir(path: Path) -> Path:
    """Create ``path`` (mode 0700) if missing; raise if it exists but is not private.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = ensure_private_dir(pathlib.Path(tempfile.mkdtemp()) / "c")
    >>> oct(d.stat().st_mode & 0o777)
    '0o700'
    """
    path = Path(path)
    try:
        path.mkdir(mode=0o700, parents=True)
    except FileExistsError:
        pass
    info = path.lstat()
    if not stat.S_ISDIR(info.st_mode):
        raise CachePermissionError(f"{path}: not a directory")
    _check(path, info, "cache directory")
    return path


def check_private_file(path: Path) -> None:
    """Raise :class:`CachePermissionError` unless ``path`` is a private regular file."""
    info = Path(path).lstat()
    if not stat.S_ISREG(info.st_mode):
        raise CachePermissionError(f"{path}: not a regular file")
    _check(Path(path), info, "cache file")
