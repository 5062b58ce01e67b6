"""Compile the shim and the stand-in driver from the C sources shipped in the package.

The libraries are built on first use with the C compiler found at run time (``$CC``, else
``cc``, ``gcc`` or ``clang`` on ``PATH``) into a per-user build directory,
``$KERNELCHECK_BUILD_DIR`` or ``~/.cache/kernelcheck/build/<key>``, where ``key`` hashes the
sources, the flags and the compiler's version: an edited source or another compiler builds
afresh, and an unchanged one is reused. Builds by concurrent processes are serialized with a
lock file and each library appears atomically (``os.replace``). Nothing but a C compiler and
the C library's headers is needed: no CUDA toolkit (``cuda_types.h`` carries the few driver
types), no Python headers (the stand-in reaches Python through ``dlsym``), no SQLite headers
(the shim ``dlopen``\\s ``libsqlite3.so.0``).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from kernelcheck.errors import KernelcheckError

__all__ = ["ShimBuildError", "SHIM_SOURCES", "STANDIN_SOURCES", "find_compiler", "build_dir",
           "preload_library", "standin_library", "source_dir"]

#: Sources of libkernelcheck_preload.so, relative to :func:`source_dir`.
SHIM_SOURCES = ("interpose.c", "hooks.c", "registry.c", "check.c", "check_fast.c",
                "check_probe.c", "alloc_table.c",
                "cache_read.c", "spool.c", "log.c", "image.c", "testing.c",
                "control.c", "recover.c", "recover_plan.c", "deferred.c")
#: Sources of the stand-in libcuda.so.1.
STANDIN_SOURCES = ("standin/driver.c", "standin/core_api.c", "standin/pybridge.c", "image.c")
_HEADERS = ("cuda_types.h", "entrypoints.h", "shim.h", "check.h", "image.h", "recover.h",
            "standin/pybridge.h", "standin/standin.h")
_CFLAGS = ("-O2", "-g", "-Wall", "-Wextra", "-fPIC", "-shared", "-fvisibility=hidden",
           "-pthread")


class ShimBuildError(KernelcheckError):
    """The shim or the stand-in driver could not be compiled (the message says why)."""


def source_dir() -> Path:
    """The directory holding the C sources (inside the installed package)."""
    return Path(__file__).resolve().parent


def find_compiler() -> str:
    """The C compiler to use: ``$CC`` or the first of cc, gcc, clang on ``PATH``.

    Raises
    ------
    ShimBuildError
        No compiler was found.
    """
    for name in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if name and shutil.which(name):
            return shutil.which(name)
    raise ShimBuildError("no C compiler found to build the interception library on first "
                         "use: install gcc or clang (Debian/Ubuntu: apt install gcc), or set "
                         "CC")


def _key(compiler: str) -> str:
    digest = hashlib.sha256()
    try:
        version = subprocess.run([compiler, "--version"], capture_output=True, text=True,
                                 timeout=30).stdout
    except (OSError, subprocess.SubprocessError) as error:
        raise ShimBuildError(f"{compiler}: cannot run: {error}") from error
    digest.update(version.encode())
    digest.update(" ".join(_CFLAGS).encode())
    for name in sorted(set(SHIM_SOURCES + STANDIN_SOURCES + _HEADERS)):
        path = source_dir() / name
        if path.exists():
            digest.update(name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def build_dir(compiler: str | None = None) -> Path:
    """The per-user directory the libraries are built into (private: see
    :func:`~kernelcheck.cache.private.ensure_private_dir`)."""
    from kernelcheck.cache.private import ensure_private_dir, user_cache_dir

    root = os.environ.get("KERNELCHECK_BUILD_DIR")
    if root:
        path = Path(root)
    else:
        path = user_cache_dir() / "build" / _key(compiler or find_compiler())
    return ensure_private_dir(path, kind="build directory")


def _first_error(output: str) -> str:
    """The compiler's first error line (or its first line), for a one-line message."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for line in lines:
        if "error" in line.lower():
            return line
    return lines[0] if lines else "no output"


def _build(target: Path, sources, extra: tuple[str, ...]) -> Path:
    if target.exists():
        return target
    missing = [s for s in sources if not (source_dir() / s).is_file()]
    if missing:
        raise ShimBuildError(f"this kernelcheck installation lacks the C sources of "
                             f"{target.name} ({source_dir() / missing[0]} is missing): "
                             f"reinstall kernelcheck from a complete wheel or sdist")
    compiler = find_compiler()
    lock_path = target.parent / ".build.lock"
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if target.exists():
            return target
        fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".so")
        os.close(fd)
        command = [compiler, *_CFLAGS, "-o", tmp,
                   *(str(source_dir() / s) for s in sources), *extra]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=300)
        except (OSError, subprocess.SubprocessError) as error:
            os.unlink(tmp)
            raise ShimBuildError(f"{compiler} failed to run: {error}") from error
        if done.returncode != 0:
            os.unlink(tmp)
            log = target.parent / "build-error.log"
            log.write_text(" ".join(command) + "\n" + done.stdout + done.stderr)
            raise ShimBuildError(f"building {target.name} with {compiler} failed: "
                                 f"{_first_error(done.stderr or done.stdout)} (the whole "
                                 f"output is in {log})")
        os.chmod(tmp, 0o755)
        os.replace(tmp, target)
    return target


def preload_library() -> Path:
    """Path of ``libkernelcheck_preload.so``, compiled if needed.

    Examples
    --------
    >>> preload_library().name
    'libkernelcheck_preload.so'
    """
    compiler = find_compiler()
    return _build(build_dir(compiler) / "libkernelcheck_preload.so", SHIM_SOURCES,
                  ("-Wl,-Bsymbolic", "-ldl"))


def standin_library() -> Path:
    """Path of the stand-in ``libcuda.so.1`` (in a directory of its own), compiled if needed.

    Its entry points are bound inside the library (``-Wl,-Bsymbolic`` and internal aliases),
    as in the real driver.
    """
    compiler = find_compiler()
    from kernelcheck.cache.private import ensure_private_dir

    directory = ensure_private_dir(build_dir(compiler) / "standin", kind="build directory")
    return _build(directory / "libcuda.so.1", STANDIN_SOURCES,
                  ("-Wl,-Bsymbolic", "-Wl,-soname,libcuda.so.1", "-ldl"))
