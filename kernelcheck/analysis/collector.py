"""The cyclic garbage collector, kept out of the way while a kernel is analysed.

The analysis of one large kernel builds millions of small term objects and keeps most of
them alive in its memo tables until it ends; the image the kernel comes from (its parsed
instructions) stays alive all the while. Python's collector walks every tracked object on
each full collection, and it starts one whenever the young objects grow by a quarter of
the old ones: on a library's kernels that is dozens of walks over millions of objects, a
third of the analysis time, and a time that varies from run to run with where the walks
fall.

:func:`paused_collector` freezes the objects alive when an analysis starts (they are not
walked until it ends), pauses automatic collection during the analysis, and afterwards
drops the analysis's memo tables and runs one collection over what the analysis left (its
reference cycles), so memory is returned once per kernel instead of being scanned over and
over. Nested and concurrent analyses share one pause: the collector resumes when the last
of them ends.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["paused_collector"]

_lock = threading.Lock()
_depth = 0
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
    global _depth, _was_enabled
    with _lock:
        _depth += 1
        if _depth == 1:
            _was_enabled = gc.isenabled()
            gc.freeze()
            gc.disable()
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            last = _depth == 0
            if last:
                try:
                    if release is not None:
                        release()
                    gc.collect()
                finally:
                    gc.unfreeze()
                    if _was_enabled:
                        gc.enable()
