"""The cyclic garbage collector, kept out of the way while a kernel is analysed.

The analysis of one large kernel builds millions of small term objects and keeps most of
them alive in its memo tables until it ends; the image the kernel comes from (its parsed
instructions) stays alive all the while. Python's collector walks every tracked object on
each full collection, and it starts one whenever the young objects grow by a quarter of
the old ones: on a library's kernels that is dozens of walks over millions of objects, a
third of the analysis time, and a time that varies from run to run with where the walks
fall.

:func:`paused_collector` pauses automatic collection while an analysis runs, and after it
drops the analysis's memo tables and collects the youngest generation once: the objects
the analysis made (its reference cycles among them), not the older ones, which the
collector's own schedule handles once it runs again. Memory is returned once per kernel
instead of being scanned over and over. Nested analyses share one pause: the collector
resumes when the outermost ends.

Only the main thread pauses the collector (the command and the workers of the local
process pool analyse there); an analysis in another thread runs with the collector as it
is, so threads never wait on one another here. A time budget
(:mod:`kernelcheck.analysis.budget`) may stop an analysis anywhere, this module's own code
included: after such a stop :func:`recover` puts the collector back as it was.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["paused_collector", "recover"]

_depth = 0
_paused = False
_was_enabled = False


@contextmanager
def paused_collector(release: Callable[[], None] | None = None) -> Iterator[None]:
    """Run the body with the collector paused (see the module docstring).

    ``release`` is called once the outermost pause ends, before the one collection: it
    drops references the analysis kept (its memo tables), so their cycles are freed in
    that collection instead of surviving into the next analysis.

    >>> import gc
    >>> with paused_collector():
    ...     gc.isenabled()
    False
    >>> gc.isenabled()
    True
    """
    global _depth, _paused, _was_enabled
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _depth += 1
    if not _paused:
        _was_enabled = gc.isenabled()
        _paused = True
        gc.disable()
    try:
        yield
    finally:
        _depth -= 1
        if _depth <= 0:
            _depth = 0
            _resume(release)


def _resume(release: Callable[[], None] | None) -> None:
    """End the pause: ``release``, one collection of the youngest generation (everything
    made while paused is still there), then the collector as it was. Safe to call again if
    a stop cut it short (each step may be repeated)."""
    global _paused
    if not _paused:
        return
    try:
        if release is not None:
            release()
        gc.collect(0)
    finally:
        if _was_enabled:
            gc.enable()
        _paused = False


def recover() -> None:
    """Put the collector back as it was before the main thread's analysis that a time
    budget stopped (wherever the stop landed); nothing to do in another thread."""
    global _depth
    if threading.current_thread() is threading.main_thread():
        _depth = 0
        _resume(None)
