"""Where the stand-in ``libcuda.so.1`` is, and the environment that makes programs use it."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["standin_library_dir", "standin_environment"]


def standin_library_dir() -> Path:
    """The directory holding the stand-in ``libcuda.so.1`` (built on first use).

    cuda-bindings finds the driver with ``dlopen("libcuda.so.1")`` (cuda-pathfinder's
    system search for driver libraries), so this directory first on ``LD_LIBRARY_PATH``
    makes a program use the stand-in.
    """
    from kernelcheck.shim.build import standin_library

    return standin_library().parent


def standin_environment(base: Mapping[str, str] | None = None, *,
                        noop_launches: bool = False) -> dict[str, str]:
    """A copy of ``base`` (default ``os.environ``) that loads the stand-in driver.

    Parameters
    ----------
    base : mapping, optional
        The environment to extend.
    noop_launches : bool
        Make launches return at once without running the kernel
        (``KERNELCHECK_STANDIN_NOOP=1``), to measure the launch path alone.
    """
    env = dict(os.environ if base is None else base)
    directory = str(standin_library_dir())
    env["LD_LIBRARY_PATH"] = os.pathsep.join(
        p for p in (directory, env.get("LD_LIBRARY_PATH", "")) if p)
    if noop_launches:
        env["KERNELCHECK_STANDIN_NOOP"] = "1"
    return env
