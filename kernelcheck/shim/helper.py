"""The analysis helper: analyses module images the shim hands over, off the launch path.

The shim writes each newly loaded module image to ``<cache dir>/spool/<sha256>-<arch>.img``
(see spool.c). The helper, a separate process started by ``kernelcheck run``, picks the files
up, checks that the content matches the hash in the name, runs kernelcheck's analysis, writes
every kernel's summary and LaunchCheck to the cache and deletes the file. The shim re-checks
the cache for kernels with no analysis every few milliseconds, so verdicts start to appear
while the program runs. The helper exits when its parent (the launcher) is gone; if it dies,
the program is not affected: its kernels simply stay ``not_proven``.

Run it by hand with ``python -m kernelcheck.shim.helper --once`` to drain the spool.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
import time

from kernelcheck.cache import AnalysisCache, image_hash

__all__ = ["analyze_image", "drain_spool", "main"]


def _suffix(data: bytes) -> str:
    if data[:4] == b"\x7fELF":
        return ".cubin"
    if data[:4] == b"\x50\xed\x55\xba":
        return ".fatbin"
    return ".ptx"


def analyze_image(cache: AnalysisCache, data: bytes, arch: str) -> int:
    """Analyse one module image and store its kernels; returns how many were stored.

    An image that cannot be read or analysed is recorded as failed (with the reason) and its
    kernels stay not proven.
    """
    from kernelcheck.analysis.summary import analyze_module
    from kernelcheck.inputs import load_input

    digest = image_hash(data)
    with tempfile.NamedTemporaryFile(suffix=_suffix(data)) as handle:
        handle.write(data)
        handle.flush()
        try:
            loaded = load_input(handle.name, arch=arch if arch.startswith("sm_") else None)
            summaries = {}
            for entry in loaded.modules:
                if entry.language == "ptx":
                    found = analyze_module(entry.module)
                else:  # SASS: lifted into the PTX form first
                    from kernelcheck.sass.analysis import analyze_sass_module

                    found = analyze_sass_module(entry.module)
                for summary in found:
                    summaries.setdefault(summary.name, summary)
        except Exception as error:  # noqa: BLE001  (any failure: the kernels stay not proven)
            cache.put_failure(digest, arch, f"{type(error).__name__}: {error}")
            return 0
    detail = "; ".join(loaded.errors)
    return cache.put_summaries(digest, arch, summaries.values(), detail=detail)


def drain_spool(cache: AnalysisCache) -> int:
    """Analyse every image waiting in the spool; returns how many images were handled."""
    spool = cache.directory / "spool"
    if not spool.is_dir():
        return 0
    done = 0
    for path in sorted(spool.glob("*.img"), key=lambda p: p.stat().st_mtime):
        name = path.stem
        digest, _, arch = name.partition("-")
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if image_hash(data) == digest and arch:
            analyze_image(cache, data, arch)
        path.unlink(missing_ok=True)
        done += 1
    return done


def main(argv=None) -> int:
    """Entry point: ``python -m kernelcheck.shim.helper [--cache-dir D] [--once]``."""
    parser = argparse.ArgumentParser(prog="kernelcheck-helper")
    parser.add_argument("--cache-dir", help="cache directory (default: the user's)")
    parser.add_argument("--once", action="store_true", help="drain the spool and exit")
    parser.add_argument("--parent", type=int, help="exit when this process is gone")
    parser.add_argument("--interval", type=float, default=0.02, help="seconds between scans")
    args = parser.parse_args(argv)
    cache = AnalysisCache(args.cache_dir)
    if args.once:
        drain_spool(cache)
        return 0
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    while args.parent is None or os.getppid() == args.parent:
        if not drain_spool(cache):
            time.sleep(args.interval)
    return 0


if __name__ == "__main__":
    sys.exit(main())
