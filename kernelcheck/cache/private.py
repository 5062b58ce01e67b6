"""The cache's trust boundary: directories and files private to the user.

Cached verdicts decide what recovery may skip saving, the build directory holds the library
preloaded into every checked program, and the grammar caches are unpickled on load: anyone who
can write into one of these directories can make kernelcheck call a clobbering launch
idempotent or run code as the user. So every directory kernelcheck keeps state in is created
by :func:`ensure_private_dir`, and checked by it before use:

* a missing directory (and any missing parent) is created with mode 0700, whatever the umask;
* a directory the user owns whose only fault is that group or others may read or enter it
  (0755, say, from an older kernelcheck or a ``mkdir -p``) is tightened to 0700, with a
  one-line notice on stderr: nobody else could have written into it;
* a directory that group or others may write into, or that another user owns, is refused
  with :class:`CachePermissionError` naming the path and the fix: its entries may have been
  planted, so nothing in it is trusted;
* every file in it must be a regular file owned by the user with no group or other access
  (:func:`check_private_file`).

The C shim applies the same rule to the directory it is given, without tightening anything
(the launcher has prepared it), and falls back to "not proven".
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

from kernelcheck.errors import KernelcheckError

__all__ = ["CachePermissionError", "cache_dir", "user_cache_dir", "ensure_private_dir",
           "check_private_file", "private_cache_file"]

_FIX = "remove it, or point KERNELCHECK_CACHE_DIR at a directory of your own"
_noticed: set[str] = set()


class CachePermissionError(KernelcheckError):
    """A cache directory or a file in it is not private to the user."""


def user_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/kernelcheck``, else ``~/.cache/kernelcheck`` (not created here).

    Where kernelcheck keeps what it builds for itself: the compiled libraries (``build/``)
    and the parsers' analysed grammars. The analysis cache lives here too unless
    ``KERNELCHECK_CACHE_DIR`` moves it (:func:`cache_dir`).
    """
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(base) / "kernelcheck"


def cache_dir() -> Path:
    """The analysis cache: ``$KERNELCHECK_CACHE_DIR``, else :func:`user_cache_dir` (not
    created here)."""
    explicit = os.environ.get("KERNELCHECK_CACHE_DIR")
    return Path(explicit) if explicit else user_cache_dir()


def _make(path: Path) -> None:
    """Create ``path`` and its missing parents with mode 0700, whatever the umask."""
    missing = []
    probe = path
    while not os.path.lexists(probe):
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory, 0o700)
        except FileExistsError:
            continue  # made by a concurrent process: checked like any existing directory
        os.chmod(directory, 0o700)


def ensure_private_dir(path: str | os.PathLike, *, kind: str = "cache directory") -> Path:
    """Create ``path`` (mode 0700) if missing, tighten a readable one, refuse an unsafe one.

    Parameters
    ----------
    path : path-like
        The directory.
    kind : str
        What it is, for messages ("cache directory", "build directory", ...).

    Returns
    -------
    Path
        ``path``, private to the user.

    Raises
    ------
    CachePermissionError
        ``path`` is not a directory, belongs to another user, or group or others may write
        into it; or it cannot be created or tightened.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = ensure_private_dir(pathlib.Path(tempfile.mkdtemp()) / "a" / "b")
    >>> oct(d.stat().st_mode & 0o777), oct(d.parent.stat().st_mode & 0o777)
    ('0o700', '0o700')
    """
    path = Path(path)
    try:
        _make(path)
        info = path.lstat()
    except OSError as error:
        raise CachePermissionError(f"{path}: cannot create the {kind}: "
                                   f"{error.strerror or error}") from error
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise CachePermissionError(f"{path}: the {kind} is not a directory (a file or a "
                                   f"symbolic link is there): {_FIX}")
    if info.st_uid != os.geteuid():
        raise CachePermissionError(f"{path}: the {kind} belongs to uid {info.st_uid}, not to "
                                   f"you (uid {os.geteuid()}), so its entries may have been "
                                   f"planted: refusing to use it; {_FIX}")
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o022:
        raise CachePermissionError(f"{path}: the {kind} has mode {mode:04o}: others may write "
                                   f"into it, so its entries may have been planted: refusing "
                                   f"to use it; {_FIX}")
    if mode & 0o077:
        try:
            os.chmod(path, 0o700)
        except OSError as error:
            raise CachePermissionError(f"{path}: the {kind} has mode {mode:04o} and cannot be "
                                       f"made private: {error.strerror}; {_FIX}") from error
        key = str(path)
        if key not in _noticed:
            _noticed.add(key)
            print(f"kernelcheck: notice: {path}: made the {kind} private (mode {mode:04o} "
                  f"-> 0700); nobody else could write into it", file=sys.stderr)
    return path


def _check(path: Path, info: os.stat_result, kind: str) -> None:
    if info.st_uid != os.geteuid():
        raise CachePermissionError(f"{path}: owned by uid {info.st_uid}, not by this user "
                                   f"(uid {os.geteuid()}): refusing to use the {kind}")
    if info.st_mode & 0o077:
        raise CachePermissionError(f"{path}: mode {stat.S_IMODE(info.st_mode):03o} lets others "
                                   f"in (expected 0600 for a file): refusing to use the {kind}")


def check_private_file(path: str | os.PathLike) -> None:
    """Raise :class:`CachePermissionError` unless ``path`` is a private regular file."""
    info = Path(path).lstat()
    if not stat.S_ISREG(info.st_mode):
        raise CachePermissionError(f"{path}: not a regular file")
    _check(Path(path), info, "cache file")


def private_cache_file(name: str) -> str | None:
    """Path of ``name`` in :func:`user_cache_dir`, or ``None`` if it cannot be made private.

    For caches that are only a speed-up (the parsers' analysed grammars, which lark unpickles
    on load): when the directory cannot be made private, the caller works without the file
    rather than falling back to a shared place such as ``/tmp``.
    """
    try:
        return str(ensure_private_dir(user_cache_dir()) / name)
    except CachePermissionError:
        return None
