"""The analysis cache: kernel summaries and LaunchChecks shared by every process of a user.

:class:`AnalysisCache` stores, per (image hash, kernel name, architecture, analyzer
version), the kernel's class, reasons, LaunchCheck (binary form, read by the C shim) and
parameter layout, in SQLite (WAL mode) under :func:`cache_dir`. See :mod:`kernelcheck.cache.store`.
"""

from kernelcheck.cache.private import (
    CachePermissionError,
    cache_dir,
    check_private_file,
    ensure_private_dir,
)
from kernelcheck.cache.store import SCHEMA_VERSION, AnalysisCache, CachedKernel, image_hash
from kernelcheck.cache.version import analyzer_version

__all__ = ["AnalysisCache", "CachedKernel", "CachePermissionError", "SCHEMA_VERSION",
           "analyzer_version", "cache_dir", "check_private_file", "ensure_private_dir",
           "image_hash"]
