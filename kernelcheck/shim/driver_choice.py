"""Which CUDA driver a program started by ``kernelcheck run`` will load, and the stand-in.

A CUDA program reaches the driver through ``dlopen("libcuda.so.1")`` (the runtime, PyTorch,
cuda-bindings' path finder): the dynamic loader looks in ``LD_LIBRARY_PATH``, then in its
cache (``ldconfig -p``), then in the default directories. :func:`find_driver` repeats that
search without loading anything, and tells the real driver from kernelcheck's stand-in
``libcuda.so.1`` (which carries a marker string). :func:`driver_environment` applies the
user's choice: ``system`` leaves the environment alone, ``standin`` puts the stand-in first
on ``LD_LIBRARY_PATH``, and ``auto`` uses the stand-in only when no driver is found.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["DriverInfo", "CHOICES", "find_driver", "driver_environment", "driver_version"]

#: ``--driver`` values.
CHOICES = ("auto", "system", "standin")
#: Marker string compiled into the stand-in (kernelcheck/shim/standin/driver.c).
STANDIN_MARKER = b"kernelcheck stand-in libcuda"
_DEFAULT_DIRS = ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64",
                 "/usr/lib", "/lib64", "/lib", "/usr/local/nvidia/lib64", "/usr/lib/wsl/lib")


@dataclass(frozen=True, slots=True)
class DriverInfo:
    """The ``libcuda.so.1`` a program would load: ``path`` (``None``: none found) and
    whether it is kernelcheck's stand-in."""

    path: str | None
    standin: bool = False

    def describe(self) -> str:
        """One line for people."""
        if self.path is None:
            return "none found (libcuda.so.1)"
        what = "kernelcheck's stand-in (CPU emulator)" if self.standin else "NVIDIA driver"
        version = driver_version(self.path) if not self.standin else None
        suffix = f", CUDA {version // 1000}.{version % 1000 // 10}" if version else ""
        return f"{what}: {self.path}{suffix}"


def _is_standin(path: str) -> bool:
    try:
        if os.path.getsize(path) > (8 << 20):  # the real driver is tens of MiB
            return False
        with open(path, "rb") as handle:
            return STANDIN_MARKER in handle.read()
    except OSError:
        return False


def _ldconfig_paths() -> list[str]:
    ldconfig = shutil.which("ldconfig") or next(
        (p for p in ("/sbin/ldconfig", "/usr/sbin/ldconfig") if os.path.exists(p)), None)
    if not ldconfig:
        return []
    try:
        listing = subprocess.run([ldconfig, "-p"], capture_output=True, text=True,
                                 timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    machine = os.uname().machine.replace("_", "-")
    found = []
    for line in listing.splitlines():
        name, _, rest = line.strip().partition(" ")
        if name == "libcuda.so.1" and "=>" in rest:
            flags, _, path = rest.partition("=>")
            if machine in flags or "x86-64" not in flags:
                found.append(path.strip())
    return found


def find_driver(env: Mapping[str, str] | None = None) -> DriverInfo:
    """The ``libcuda.so.1`` a program started with ``env`` (default ``os.environ``) loads.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "libcuda.so.1").write_bytes(b"\\x7fELF " + STANDIN_MARKER)
    >>> info = find_driver({"LD_LIBRARY_PATH": str(d)})
    >>> info.standin, info.path == str((d / "libcuda.so.1").resolve())
    (True, True)
    """
    env = os.environ if env is None else env
    candidates = [os.path.join(d, "libcuda.so.1")
                  for d in env.get("LD_LIBRARY_PATH", "").split(os.pathsep) if d]
    candidates += _ldconfig_paths()
    candidates += [os.path.join(d, "libcuda.so.1") for d in _DEFAULT_DIRS]
    for path in candidates:
        if os.path.isfile(path):
            return DriverInfo(os.path.realpath(path), _is_standin(path))
    return DriverInfo(None)


def driver_version(path: str) -> int | None:
    """``cuDriverGetVersion`` of the driver at ``path`` (1000*major + 10*minor), or None.

    Loads the library into this process (``RTLD_LOCAL``) without initialising CUDA.
    """
    try:
        library = ctypes.CDLL(path, mode=ctypes.RTLD_LOCAL)
        version = ctypes.c_int(0)
        if library.cuDriverGetVersion(ctypes.byref(version)) != 0:
            return None
    except (OSError, AttributeError):
        return None
    return version.value or None


def driver_environment(choice: str,
                       base: Mapping[str, str]) -> tuple[dict[str, str], str, bool]:
    """``base`` adjusted for ``--driver choice``, a line saying which driver the program gets,
    and whether that line is news the user should see (the stand-in chosen for them, or no
    driver at all).

    Raises
    ------
    KernelcheckError
        An unknown choice, or the stand-in is needed and cannot be built.
    """
    from kernelcheck.errors import KernelcheckError

    if choice not in CHOICES:
        raise KernelcheckError(f"--driver {choice}: expected one of {', '.join(CHOICES)}")
    env = dict(base)
    found = find_driver(env)
    if choice == "system" or (choice == "auto" and found.path and not found.standin):
        if found.path is None:
            return env, ("no CUDA driver (libcuda.so.1) found: the program's CUDA calls will "
                         "fail (--driver standin runs it on the CPU emulator)"), True
        return env, f"CUDA driver: {found.describe()}", False
    if choice == "auto" and found.standin:
        return env, f"CUDA driver: {found.describe()}", False
    from kernelcheck.standin import standin_environment

    env = standin_environment(env)
    if choice == "auto":
        return env, ("no CUDA driver (libcuda.so.1) found: running the program on "
                     "kernelcheck's stand-in driver (the CPU emulator; PTX kernels only)"), True
    return env, "CUDA driver: kernelcheck's stand-in (CPU emulator)", False
