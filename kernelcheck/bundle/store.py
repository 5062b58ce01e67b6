"""The analysis bundle file (``.kcb``): schema, trust check, writing, reading and import.

A bundle is one SQLite file holding the analyses of every kernel of some images, made once
and shipped to every node of a cluster with its environment. It carries the analysis
cache's own tables (``images`` and ``summaries``, same columns, same
``PRAGMA user_version``), so the shim reads a bundle with the very query it uses on the
cache, plus a manifest::

    manifest(key, value)            format_version, analyzer_version, kernelcheck_version,
                                    created (Unix time), arch_filter
    bundle_images(image_hash, arch, file, origin, kind, status, detail, kernels)
                                    one row per image: where it came from, how it went

``PRAGMA application_id`` is :data:`APPLICATION_ID` ("KCB1"), which tells a bundle from a
cache or any other SQLite file. The journal mode is DELETE, not WAL: a bundle is read-only
once written, and SQLite can open a DELETE-mode file on read-only media without a ``-shm``
file; the shim opens it as ``immutable``.

**Trust.** A bundle holds verdicts, and a verdict decides what recovery may skip saving:
whoever can write a bundle can make a clobbering launch look idempotent and corrupt data on
every node that uses it. A bundle is therefore used only when the file is a regular file
owned by the user or by root and writable by no one else (no group or other write bit), in
a directory owned by the user or root that others cannot write to (unless it is sticky,
like ``/tmp``, where others cannot replace a file they do not own). Unlike the cache,
others may *read* it: a bundle is meant to be shared. Anything else is refused with one
warning (here and in the C shim).

**Validity.** Only entries made by the running analyzer version count (any change to the
analysis code changes the version), and only those of images the manifest lists as
analysed; the others are ignored with one warning.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import struct
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from kernelcheck.cache.private import CachePermissionError

# The cache's own table definitions: the shim must read a bundle with the cache's query.
from kernelcheck.cache.store import _SCHEMA, SCHEMA_VERSION, AnalysisCache
from kernelcheck.cache.version import analyzer_version
from kernelcheck.errors import KernelcheckError

__all__ = ["APPLICATION_ID", "BUNDLE_FORMAT_VERSION", "BundleError", "BundleTrustError",
           "BundleImage", "BundleInfo", "BundleWriter", "check_bundle_file", "read_bundle",
           "import_bundle"]

#: ``PRAGMA application_id`` of a bundle: "KCB1" as a big-endian 32-bit integer.
APPLICATION_ID = 0x4B434231
#: Version of the manifest and ``bundle_images`` tables.
BUNDLE_FORMAT_VERSION = 1

_BUNDLE_SCHEMA = _SCHEMA + """
CREATE TABLE IF NOT EXISTS manifest (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS bundle_images (
    image_hash TEXT NOT NULL, arch TEXT NOT NULL, file TEXT NOT NULL, origin TEXT NOT NULL,
    kind TEXT NOT NULL, status TEXT NOT NULL, detail TEXT NOT NULL, kernels INTEGER NOT NULL,
    PRIMARY KEY (image_hash, arch, file, origin));
"""


class BundleError(KernelcheckError):
    """A file is not a readable analysis bundle (the message says what was found)."""


class BundleTrustError(BundleError, CachePermissionError):
    """A bundle, or its directory, can be written by someone other than the user or root."""


@dataclass(frozen=True, slots=True)
class BundleImage:
    """One image row of the manifest."""

    image_hash: str
    arch: str
    file: str
    origin: str
    kind: str
    status: str
    detail: str
    kernels: int


@dataclass(frozen=True, slots=True)
class BundleInfo:
    """What ``kernelcheck bundle info`` shows: the manifest and what is usable now.

    ``usable`` counts the kernel entries this analyzer version will use; ``stale`` those
    made by another analyzer version; ``orphans`` those of images the manifest does not
    list as analysed.
    """

    path: str
    format_version: int
    analyzer_version: str
    kernelcheck_version: str
    created: float
    images: tuple[BundleImage, ...]
    kernels: int
    usable: int
    stale: int
    orphans: int

    def to_json(self) -> dict:
        """The information as a JSON object."""
        return {"path": self.path, "format_version": self.format_version,
                "analyzer_version": self.analyzer_version,
                "kernelcheck_version": self.kernelcheck_version, "created": self.created,
                "kernels": self.kernels, "usable": self.usable, "stale": self.stale,
                "orphans": self.orphans,
                "images": [{"image_hash": i.image_hash, "arch": i.arch, "file": i.file,
                            "origin": i.origin, "kind": i.kind, "status": i.status,
                            "detail": i.detail, "kernels": i.kernels} for i in self.images]}


def _summary_rows(digest: str, arch: str, version: str, summaries, now: float) -> list[tuple]:
    """``summaries`` rows, encoded exactly as :meth:`AnalysisCache.put_summaries` encodes
    them (tests/bundle checks the two agree)."""
    rows = []
    for s in summaries:
        layout = b"".join(struct.pack("<II", offset, size) for _, offset, size in s.params)
        rows.append((digest, s.name, arch, version, s.kernel_class,
                     json.dumps(list(s.reasons)), s.launch_check.to_bytes(), layout,
                     s.launch_check.param_size, json.dumps(s.to_json()), now))
    return rows


def _owner_ok(info: os.stat_result) -> bool:
    return info.st_uid in (os.geteuid(), 0)


def check_bundle_file(path: str | os.PathLike) -> None:
    """Raise :class:`BundleTrustError` unless ``path`` may be trusted (see the module notes).

    Examples
    --------
    >>> import tempfile, os
    >>> d = tempfile.mkdtemp(); p = os.path.join(d, "a.kcb"); open(p, "w").close()
    >>> os.chmod(p, 0o644); check_bundle_file(p)
    >>> os.chmod(p, 0o666); check_bundle_file(p)
    Traceback (most recent call last):
    ...
    kernelcheck.bundle.store.BundleTrustError: ...
    """
    path = Path(path)
    try:
        info = path.stat()
        parent = path.resolve().parent.stat()
    except OSError as error:
        raise BundleError(f"{path}: cannot open the bundle: {error.strerror}") from error
    if not stat.S_ISREG(info.st_mode):
        raise BundleTrustError(f"{path}: not a regular file: refusing to use the bundle")
    if not _owner_ok(info) or info.st_mode & 0o022:
        raise BundleTrustError(
            f"{path}: owner uid {info.st_uid}, mode {stat.S_IMODE(info.st_mode):03o}: a bundle "
            f"must be owned by this user (uid {os.geteuid()}) or root and writable by no one "
            f"else (chmod go-w), since its verdicts decide what recovery may skip saving: "
            f"refusing to use it")
    if not _owner_ok(parent) or (parent.st_mode & 0o022 and not parent.st_mode & stat.S_ISVTX):
        raise BundleTrustError(
            f"{path}: its directory (owner uid {parent.st_uid}, mode "
            f"{stat.S_IMODE(parent.st_mode):03o}) lets others replace the bundle: refusing "
            f"to use it")


class BundleWriter:
    """Write a new bundle at ``path`` (atomically: a temporary file, renamed on close).

    Examples
    --------
    >>> import tempfile, os
    >>> out = os.path.join(tempfile.mkdtemp(), "empty.kcb")
    >>> with BundleWriter(out) as w:
    ...     pass
    >>> read_bundle(out).kernels
    0
    """

    def __init__(self, path: str | os.PathLike, arch_filter: str | None = None) -> None:
        self.path = Path(path)
        self.version = analyzer_version()
        self._temp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        self._temp.unlink(missing_ok=True)
        fd = os.open(self._temp, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
        os.close(fd)
        self._db = sqlite3.connect(self._temp, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=DELETE")
        self._db.executescript(_BUNDLE_SCHEMA)
        self._db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        self._db.execute(f"PRAGMA application_id={APPLICATION_ID}")
        from kernelcheck import __version__

        self._db.executemany("INSERT INTO manifest VALUES (?, ?)", [
            ("format_version", str(BUNDLE_FORMAT_VERSION)),
            ("analyzer_version", self.version), ("kernelcheck_version", __version__),
            ("created", repr(time.time())), ("arch_filter", arch_filter or "")])
        self._db.execute("BEGIN")

    def add(self, image, status: str, detail: str, summaries) -> int:
        """Store one image (a :class:`~kernelcheck.bundle.images.ShippedImage`) and the
        :class:`~kernelcheck.analysis.summary.KernelSummary` list of its kernels."""
        now = time.time()
        rows = _summary_rows(image.image_hash, image.arch, self.version, summaries, now)
        self._db.executemany("INSERT OR REPLACE INTO summaries VALUES "
                             "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        self._db.execute("INSERT OR REPLACE INTO images VALUES (?, ?, ?, ?, ?, ?)",
                         (image.image_hash, image.arch, self.version, status, detail, now))
        self._db.execute("INSERT OR REPLACE INTO bundle_images VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                         (image.image_hash, image.arch, image.file, image.origin, image.kind,
                          status, detail, len(rows)))
        return len(rows)

    def close(self) -> None:
        """Commit and move the finished bundle into place (mode 0644)."""
        self._db.execute("COMMIT")
        self._db.execute("VACUUM")
        self._db.close()
        os.chmod(self._temp, 0o644)
        os.replace(self._temp, self.path)

    def abort(self) -> None:
        """Drop the unfinished bundle."""
        self._db.close()
        self._temp.unlink(missing_ok=True)

    def __enter__(self) -> BundleWriter:
        return self

    def __exit__(self, kind, *rest) -> None:
        if kind is None:
            self.close()
        else:
            self.abort()


def _open(path: str | os.PathLike) -> sqlite3.Connection:
    check_bundle_file(path)
    uri = Path(path).resolve().as_uri() + "?mode=ro&immutable=1"
    try:
        db = sqlite3.connect(uri, uri=True)
        app = db.execute("PRAGMA application_id").fetchone()[0]
        version = db.execute("PRAGMA user_version").fetchone()[0]
    except sqlite3.DatabaseError as error:
        raise BundleError(f"{path}: not an analysis bundle ({error})") from error
    if app != APPLICATION_ID:
        db.close()
        raise BundleError(f"{path}: not an analysis bundle (SQLite application id "
                          f"{app:#x}, expected {APPLICATION_ID:#x})")
    if version != SCHEMA_VERSION:
        db.close()
        raise BundleError(f"{path}: bundle of cache schema version {version}, this "
                          f"kernelcheck reads version {SCHEMA_VERSION}")
    return db


_ORPHAN = ("NOT EXISTS (SELECT 1 FROM bundle_images b WHERE b.image_hash = s.image_hash "
           "AND b.arch = s.arch AND b.status = 'done')")


def read_bundle(path: str | os.PathLike) -> BundleInfo:
    """The manifest of a bundle and how many of its entries this analyzer can use.

    Raises
    ------
    BundleError
        Not a bundle, or unreadable; :class:`BundleTrustError` if others can write it.
    """
    db = _open(path)
    try:
        manifest = dict(db.execute("SELECT key, value FROM manifest"))
        images = tuple(BundleImage(*row) for row in db.execute(
            "SELECT image_hash, arch, file, origin, kind, status, detail, kernels FROM "
            "bundle_images ORDER BY file, origin, arch"))
        version = analyzer_version()
        total = db.execute("SELECT count(*) FROM summaries").fetchone()[0]
        stale = db.execute("SELECT count(*) FROM summaries WHERE analyzer_version != ?",
                           (version,)).fetchone()[0]
        orphans = db.execute(f"SELECT count(*) FROM summaries s WHERE analyzer_version = ? "
                             f"AND {_ORPHAN}", (version,)).fetchone()[0]
    except sqlite3.DatabaseError as error:
        raise BundleError(f"{path}: unreadable bundle: {error}") from error
    finally:
        db.close()
    return BundleInfo(str(path), int(manifest.get("format_version", 0)),
                      manifest.get("analyzer_version", ""),
                      manifest.get("kernelcheck_version", ""),
                      float(manifest.get("created", 0)), images, total,
                      total - stale - orphans, stale, orphans)


def warn_ignored(info: BundleInfo) -> str | None:
    """The one warning line for entries of ``info`` that will be ignored, or ``None``."""
    parts = []
    if info.stale:
        parts.append(f"{info.stale} made by analyzer version {info.analyzer_version} (this "
                     f"is {analyzer_version()}; re-create the bundle with this kernelcheck)")
    if info.orphans:
        parts.append(f"{info.orphans} of images the manifest does not list as analysed")
    if not parts:
        return None
    return f"kernelcheck: warning: {info.path}: ignoring kernel entries: {'; '.join(parts)}"


def import_bundle(path: str | os.PathLike, cache: AnalysisCache | None = None
                  ) -> tuple[int, int]:
    """Copy the usable entries of a bundle into the user's analysis cache.

    Returns ``(kernels imported, images imported)``. Entries of another analyzer version,
    or of images the manifest does not list as analysed, are left out with one warning on
    stderr.
    """
    info = read_bundle(path)
    warning = warn_ignored(info)
    if warning:
        print(warning, file=sys.stderr)
    own = cache is None
    cache = cache or AnalysisCache()
    try:
        db = sqlite3.connect(Path(cache.path).resolve().as_uri(), uri=True, timeout=30,
                             isolation_level=None)
        try:
            uri = Path(path).resolve().as_uri() + "?mode=ro&immutable=1"
            db.execute("ATTACH DATABASE ? AS bundle", (uri,))
            version = analyzer_version()
            db.execute("BEGIN IMMEDIATE")
            orphan = _ORPHAN.replace("bundle_images", "bundle.bundle_images")
            kernels = db.execute(
                f"INSERT OR REPLACE INTO main.summaries SELECT s.* FROM bundle.summaries s "
                f"WHERE s.analyzer_version = ? AND NOT {orphan}", (version,)).rowcount
            images = db.execute(
                "INSERT OR REPLACE INTO main.images SELECT * FROM bundle.images WHERE "
                "analyzer_version = ?", (version,)).rowcount
            db.execute("COMMIT")
        finally:
            db.close()
    finally:
        if own:
            cache.close()
    return kernels, images


