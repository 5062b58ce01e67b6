"""The control channel to the preloaded shim: open and close one test's instance file.

The shim (``kernelcheck/shim/control.c``) exports ``kernelcheck_scope_begin(path)``,
``kernelcheck_scope_end()`` and ``kernelcheck_set_analysis_wait_ms(ms)``. They are found in
the process's global symbol namespace (``ctypes.CDLL(None)``), where ``LD_PRELOAD`` put
them; when they are missing, the shim is not loaded and :func:`find_channel` returns
``None``. Child processes learn the open scope from ``KERNELCHECK_SCOPE_LOG`` (and the wait
from ``KERNELCHECK_ANALYSIS_WAIT_MS``), which :class:`ShimChannel` sets in ``os.environ``
while a scope is open.
"""

from __future__ import annotations

import ctypes
import os

__all__ = ["ShimChannel", "find_channel", "SCOPE_ENV", "WAIT_ENV"]

SCOPE_ENV = "KERNELCHECK_SCOPE_LOG"
WAIT_ENV = "KERNELCHECK_ANALYSIS_WAIT_MS"


class ShimChannel:
    """The shim's control functions in this process.

    Parameters
    ----------
    library : ctypes.CDLL
        A handle whose symbols include the shim's exports.
    """

    def __init__(self, library: ctypes.CDLL) -> None:
        self._begin = library.kernelcheck_scope_begin
        self._begin.argtypes = [ctypes.c_char_p]
        self._begin.restype = ctypes.c_int
        self._end = library.kernelcheck_scope_end
        self._end.argtypes = []
        self._end.restype = ctypes.c_long
        self._wait = library.kernelcheck_set_analysis_wait_ms
        self._wait.argtypes = [ctypes.c_long]
        self._wait.restype = None
        self.version = int(library.kernelcheck_control_version())

    def set_analysis_wait(self, seconds: float) -> None:
        """Make launches of kernels not analysed yet wait up to ``seconds`` (this process
        and the processes it starts from now on)."""
        ms = max(0, int(seconds * 1000))
        self._wait(ms)
        os.environ[WAIT_ENV] = str(ms)

    def begin(self, path: str | os.PathLike) -> None:
        """Record every instance launched from now on into ``path`` (JSON lines).

        Raises
        ------
        OSError
            The shim cannot open ``path``.
        """
        raw = os.fsencode(os.fspath(path))
        if self._begin(raw) != 0:
            errno = ctypes.get_errno()
            raise OSError(errno, f"the shim cannot open {os.fspath(path)}")
        os.environ[SCOPE_ENV] = os.fspath(path)

    def end(self) -> int:
        """Close the scope; returns how many records this process wrote into it."""
        os.environ.pop(SCOPE_ENV, None)
        return max(0, int(self._end()))


def find_channel() -> ShimChannel | None:
    """The shim's control channel, or ``None`` when the shim is not preloaded.

    Examples
    --------
    >>> find_channel() is None or find_channel().version >= 1
    True
    """
    try:
        return ShimChannel(ctypes.CDLL(None, use_errno=True))
    except (AttributeError, OSError):
        return None
