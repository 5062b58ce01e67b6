"""Task functions for the executor tests (importable by worker processes).

``die_once`` kills the worker process running it the first time it runs for a given marker
(a worker lost in the middle of a task), and returns normally afterwards; ``always_die``
kills every worker that runs it.
"""

from __future__ import annotations

import os
import time
from pathlib import Path


def square_slowly(n: int, seconds: float = 0.0) -> int:
    time.sleep(seconds)
    return n * n


def die_once(marker: str, n: int, seconds: float = 0.05) -> int:
    path = Path(marker)
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        time.sleep(seconds)
        return n * n
    os.close(fd)
    time.sleep(seconds)
    os._exit(17)


def always_die(n: int) -> int:
    os._exit(19)


def fail(n: int) -> int:
    raise ValueError(f"task {n} failed by design")
