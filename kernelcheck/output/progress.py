"""Progress bars on standard error, for the runs that take minutes: a library's images,
a bundle's images, an injection campaign's trials.

A bar is drawn only when standard error is a terminal and ``--quiet`` was not given, so
CI logs and pipes never receive carriage-return noise. It shows done/total, the rate and
the estimated time left (tqdm's ``<`` field). tqdm is imported only when a bar is drawn.
"""

from __future__ import annotations

import sys

__all__ = ["ProgressBar", "progress_enabled"]


def progress_enabled(quiet: bool = False, stream=None) -> bool:
    """Whether a bar should be drawn: not ``quiet`` and the stream is a terminal."""
    stream = stream or sys.stderr
    try:
        return not quiet and stream.isatty()
    except (AttributeError, ValueError):
        return False


def _columns() -> int:
    import os

    try:
        return os.get_terminal_size(sys.stderr.fileno()).columns
    except (OSError, ValueError, AttributeError):
        return 0


class ProgressBar:
    """``done/total unit [elapsed<left, rate]`` on stderr, when enabled.

    Parameters
    ----------
    total : int
        Units of work.
    unit : str
        What is counted (``images``, ``trials``, ``B``).
    enabled : bool, optional
        Default: :func:`progress_enabled`.
    scaled : bool, optional
        Show counts with k/M/G prefixes (for bytes).
    """

    def __init__(self, total: int, unit: str = "tasks", enabled: bool | None = None,
                 description: str = "", scaled: bool = False) -> None:
        self.total = total
        self.done = 0
        self.enabled = progress_enabled() if enabled is None else enabled
        self._bar = None
        if self.enabled:
            from tqdm import tqdm

            # A terminal that reports no size (a fresh pseudo-terminal, some CI consoles)
            # would get a zero-width bar, hidden below its zero rows: 80x24 then.
            sized = _columns() > 0
            # ``scaled``: large counts (bytes) shown with k/M/G prefixes.
            self._bar = tqdm(total=total, unit=unit if scaled else f" {unit}",
                             unit_scale=scaled, unit_divisor=1024 if scaled else 1000,
                             desc=description or None,
                             file=sys.stderr, dynamic_ncols=sized,
                             ncols=None if sized else 80, nrows=None if sized else 24,
                             leave=False, mininterval=0.2, smoothing=0.1)

    def step(self, extra: str = "", count: int = 1) -> None:
        """Count ``count`` finished units; ``extra`` is shown after the bar."""
        self.done += count
        if self._bar is not None:
            if extra:
                self._bar.set_postfix_str(extra, refresh=False)
            self._bar.update(count)

    def finish(self) -> None:
        """Remove the bar from the terminal."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None
