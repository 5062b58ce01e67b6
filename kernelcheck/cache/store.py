"""The SQLite analysis cache (schema, reads, writes, recovery from corruption).

Schema (``PRAGMA user_version`` = :data:`SCHEMA_VERSION`)::

    images(image_hash, arch, analyzer_version, status, detail, created)
        one row per analysed image: status "done" or "failed" (detail says why)
    summaries(image_hash, kernel, arch, analyzer_version, kernel_class, reasons,
              check_blob, layout, param_size, summary_json, created)
        check_blob: LaunchCheck.to_bytes(); layout: per parameter u32 offset, u32 size

The database lives at ``<cache dir>/analysis.sqlite3`` in WAL mode, so any number of
processes read while one writes; writers retry on a busy database for up to 30 s. A file that
is not a SQLite database, fails ``PRAGMA quick_check`` or has another schema version is
moved aside (``analysis.sqlite3.corrupt-<time>``) and rebuilt empty: the cache is a cache,
and a broken one must never stop the program or return a wrong verdict. Rows are only
returned when they carry the current :func:`~kernelcheck.cache.version.analyzer_version`.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import struct
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from kernelcheck.cache.private import cache_dir, check_private_file, ensure_private_dir
from kernelcheck.cache.version import analyzer_version

__all__ = ["SCHEMA_VERSION", "AnalysisCache", "CachedKernel", "image_hash", "DB_NAME"]

SCHEMA_VERSION = 1
DB_NAME = "analysis.sqlite3"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS images (
    image_hash TEXT NOT NULL, arch TEXT NOT NULL, analyzer_version TEXT NOT NULL,
    status TEXT NOT NULL, detail TEXT NOT NULL DEFAULT '', created REAL NOT NULL,
    PRIMARY KEY (image_hash, arch, analyzer_version));
CREATE TABLE IF NOT EXISTS summaries (
    image_hash TEXT NOT NULL, kernel TEXT NOT NULL, arch TEXT NOT NULL,
    analyzer_version TEXT NOT NULL, kernel_class TEXT NOT NULL, reasons TEXT NOT NULL,
    check_blob BLOB NOT NULL, layout BLOB NOT NULL, param_size INTEGER NOT NULL,
    summary_json TEXT NOT NULL, created REAL NOT NULL,
    PRIMARY KEY (image_hash, kernel, arch, analyzer_version));
"""


def image_hash(data: bytes) -> str:
    """The cache key of a module image: SHA-256 in hex (what the shim computes in C)."""
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True, slots=True)
class CachedKernel:
    """One cached kernel analysis."""

    image_hash: str
    kernel: str
    arch: str
    kernel_class: str
    reasons: tuple[str, ...]
    check_blob: bytes
    layout: tuple[tuple[int, int], ...]
    param_size: int


class AnalysisCache:
    """The per-user analysis cache.

    Parameters
    ----------
    directory : path, optional
        Default :func:`~kernelcheck.cache.private.cache_dir`. Created 0700 if missing;
        :class:`~kernelcheck.cache.private.CachePermissionError` if it is not private.

    Examples
    --------
    >>> import tempfile
    >>> cache = AnalysisCache(tempfile.mkdtemp())
    >>> cache.get("0" * 64, "vec_add", "sm_90") is None
    True
    """

    def __init__(self, directory: str | os.PathLike | None = None) -> None:
        self.directory = ensure_private_dir(Path(directory) if directory else cache_dir())
        self.path = self.directory / DB_NAME
        self.version = analyzer_version()
        self.rebuilt_from: Path | None = None
        self._db = self._open()

    # ------------------------------------------------------------------ opening
    def _connect(self) -> sqlite3.Connection:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        os.close(fd)
        check_private_file(self.path)
        db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        return db

    def _open(self) -> sqlite3.Connection:
        try:
            db = self._connect()
            if db.execute("PRAGMA quick_check").fetchone()[0] != "ok":
                raise sqlite3.DatabaseError("quick_check failed")
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version not in (0, SCHEMA_VERSION):
                raise sqlite3.DatabaseError(f"schema version {version}, "
                                            f"expected {SCHEMA_VERSION}")
            if version == 0:
                tables = db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
                if tables:
                    raise sqlite3.DatabaseError("a database of something else")
                db.executescript(_SCHEMA)
                db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            return db
        except sqlite3.DatabaseError as error:
            return self._rebuild(error)

    def _rebuild(self, error: Exception) -> sqlite3.Connection:
        aside = self.path.with_name(f"{DB_NAME}.corrupt-{int(time.time() * 1000)}")
        for suffix in ("", "-wal", "-shm"):
            part = Path(str(self.path) + suffix)
            if part.exists():
                os.replace(part, Path(str(aside) + suffix))
        self.rebuilt_from = aside
        print(f"kernelcheck: warning: the analysis cache {self.path} was unreadable "
              f"({error}); moved aside to {aside.name} and rebuilt empty", file=sys.stderr)
        db = self._connect()
        db.executescript(_SCHEMA)
        db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        return db

    def close(self) -> None:
        self._db.close()

    # ------------------------------------------------------------------ writes
    def put_summaries(self, digest: str, arch: str, summaries, status: str = "done",
                      detail: str = "") -> int:
        """Store the :class:`~kernelcheck.analysis.summary.KernelSummary` list of one image.

        Returns the number of kernels stored.
        """
        now = time.time()
        rows = []
        for s in summaries:
            layout = b"".join(struct.pack("<II", offset, size) for _, offset, size in s.params)
            rows.append((digest, s.name, arch, self.version, s.kernel_class,
                         json.dumps(list(s.reasons)), s.launch_check.to_bytes(), layout,
                         s.launch_check.param_size, json.dumps(s.to_json()), now))
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.executemany("INSERT OR REPLACE INTO summaries VALUES "
                                 "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
            self._db.execute("INSERT OR REPLACE INTO images VALUES (?, ?, ?, ?, ?, ?)",
                             (digest, arch, self.version, status, detail, now))
        return len(rows)

    def put_failure(self, digest: str, arch: str, detail: str) -> None:
        """Record that an image could not be analysed (its kernels stay not proven)."""
        with self._db:
            self._db.execute("INSERT OR REPLACE INTO images VALUES (?, ?, ?, ?, ?, ?)",
                             (digest, arch, self.version, "failed", detail, time.time()))

    # ------------------------------------------------------------------ reads
    def get(self, digest: str, kernel: str, arch: str) -> CachedKernel | None:
        """The cached analysis of one kernel, or ``None``."""
        row = self._db.execute(
            "SELECT kernel_class, reasons, check_blob, layout, param_size FROM summaries "
            "WHERE image_hash = ? AND kernel = ? AND arch = ? AND analyzer_version = ?",
            (digest, kernel, arch, self.version)).fetchone()
        if row is None:
            return None
        layout = tuple(struct.iter_unpack("<II", row[3]))
        return CachedKernel(digest, kernel, arch, row[0], tuple(json.loads(row[1])), row[2],
                            layout, row[4])

    def image_status(self, digest: str, arch: str) -> tuple[str, str] | None:
        """``(status, detail)`` of an analysed image, or ``None`` if never analysed."""
        row = self._db.execute(
            "SELECT status, detail FROM images WHERE image_hash = ? AND arch = ? AND "
            "analyzer_version = ?", (digest, arch, self.version)).fetchone()
        return None if row is None else (row[0], row[1])

    def num_kernels(self) -> int:
        """How many kernels the cache holds for the current analyzer version."""
        return self._db.execute("SELECT count(*) FROM summaries WHERE analyzer_version = ?",
                                (self.version,)).fetchone()[0]
