"""Output files that are complete or absent: checked before work starts, written to a
temporary file in the same directory and renamed into place.

A report that stops half way (an error, Ctrl-C, a full disk) must not leave a truncated
JSON or SARIF file that a CI step then reads as if it were whole. :func:`check_writable`
fails early, before any analysis, when the output cannot be created (missing directory, a
directory where the file should be, a read-only file system or file); :class:`AtomicFile`
writes beside the target and renames over it only on success (``os.replace`` within one
directory is atomic on POSIX), and removes its temporary file on any failure.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from kernelcheck.errors import KernelcheckError

__all__ = ["OutputError", "check_writable", "AtomicFile", "open_output", "write_atomic"]


class OutputError(KernelcheckError):
    """An output file cannot be written (the message names it and why)."""


def _why(error: OSError) -> str:
    return error.strerror or str(error)


def check_writable(path: str | os.PathLike, option: str = "output") -> None:
    """Raise :class:`OutputError` unless a file can be created at ``path``.

    Tests what an actual write would meet: the directory exists, is a directory and takes
    a new file (a probe file is created and removed), and ``path`` is not a directory or a
    file that cannot be opened for writing. ``-`` (standard output) always passes.

    Examples
    --------
    >>> check_writable("/nonexistent-dir/out.json")
    Traceback (most recent call last):
    ...
    kernelcheck.output.files.OutputError: cannot write /nonexistent-dir/out.json (output): \
directory /nonexistent-dir does not exist
    """
    text = os.fspath(path)
    if text == "-":
        return
    target = Path(text)
    parent = target.parent if str(target.parent) else Path(".")
    where = f"cannot write {text} ({option})"
    if not parent.exists():
        raise OutputError(f"{where}: directory {parent} does not exist")
    if not parent.is_dir():
        raise OutputError(f"{where}: {parent} is not a directory")
    if target.is_dir():
        raise OutputError(f"{where}: it is a directory")
    if target.exists() and not os.access(target, os.W_OK):
        raise OutputError(f"{where}: the file is read-only")
    try:
        fd, probe = tempfile.mkstemp(dir=parent, prefix=f".{target.name}.", suffix=".probe")
    except OSError as error:
        raise OutputError(f"{where}: {_why(error)}") from None
    os.close(fd)
    os.unlink(probe)
    if target.exists():
        try:
            with open(target, "r+b"):
                pass
        except OSError as error:
            raise OutputError(f"{where}: {_why(error)}") from None


class AtomicFile:
    """A file written under a temporary name and renamed to ``path`` by :meth:`commit`.

    Used as a context manager it commits when the block ends normally and discards the
    temporary file when it raises (an error, or ``KeyboardInterrupt``). A writer that wants
    to keep what it has on Ctrl-C writes a complete, partial document and commits in its
    own handler.
    """

    def __init__(self, path: str | os.PathLike, mode: str = "w", option: str = "output"
                 ) -> None:
        self.path = Path(path)
        self.option = option
        parent = self.path.parent if str(self.path.parent) else Path(".")
        try:
            fd, temp = tempfile.mkstemp(dir=parent, prefix=f".{self.path.name}.",
                                        suffix=".tmp")
        except OSError as error:
            raise OutputError(f"cannot write {self.path} ({option}): {_why(error)}") from None
        self.temp = Path(temp)
        self.handle: IO = os.fdopen(fd, mode if "b" in mode else mode,
                                    **({} if "b" in mode else {"encoding": "utf-8"}))
        self.done = False

    def write(self, data) -> int:
        return self.handle.write(data)

    def flush(self) -> None:
        self.handle.flush()

    def commit(self) -> Path:
        """Flush, make the file readable as a normal new file would be, and rename it."""
        if self.done:
            return self.path
        try:
            self.handle.flush()
            os.fsync(self.handle.fileno())
            self.handle.close()
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(self.temp, 0o666 & ~umask)
            os.replace(self.temp, self.path)
        except OSError as error:
            self.discard()
            code = f" ({errno.errorcode.get(error.errno, '')})" if error.errno else ""
            raise OutputError(f"cannot write {self.path} ({self.option}): "
                              f"{_why(error)}{code}") from None
        self.done = True
        return self.path

    def discard(self) -> None:
        """Drop the temporary file; ``path`` is left as it was."""
        self.done = True
        with contextlib.suppress(OSError):
            self.handle.close()
        with contextlib.suppress(OSError):
            self.temp.unlink()

    def __enter__(self) -> AtomicFile:
        return self

    def __exit__(self, kind, value, traceback) -> None:
        if self.done:
            return
        if kind is None:
            self.commit()
        else:
            self.discard()


@contextlib.contextmanager
def open_output(path: str | None, option: str = "output") -> Iterator[IO]:
    """Standard output for ``None`` or ``-``, else an :class:`AtomicFile` (text)."""
    if path in (None, "-"):
        yield sys.stdout
        sys.stdout.flush()
        return
    with AtomicFile(path, option=option) as handle:
        yield handle  # type: ignore[misc]


def write_atomic(path: str | os.PathLike, data: str | bytes, option: str = "output") -> Path:
    """Write ``data`` to ``path`` whole or not at all."""
    mode = "wb" if isinstance(data, bytes) else "w"
    with AtomicFile(path, mode, option=option) as handle:
        handle.write(data)
    return Path(path)
