"""Kernel instances attributed to one test: read from the shim's records, explained.

The shim writes one JSON line per launch (``kernelcheck/shim/control.c``). This module turns
the lines into :class:`KernelInstance` values: the parameter buffer is split into one value
per parameter with the layout the analysis cache holds for the kernel, and a verdict other
than idempotent gets a reason for people, made of the rule that decided it, the evaluator's
words for this instance (when the Python evaluator, run without the allocation table,
reaches the same verdict as the shim) and the analysis' reasons for the kernel.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["KernelInstance", "InstanceExplainer", "read_records", "RULE_TEXT"]

_MAX_CACHE_FAILURES = 5

#: What each rule means, in words (the rule names of kernelcheck.launch and the shim).
RULE_TEXT = {
    "no_clobber": "no global location is both read and written",
    "disjoint": "every global location written is disjoint from every location read",
    "no_threads": "the launch has no threads",
    "non_idempotent_atomic": "a non-idempotent atomic read-modify-write on global memory",
    "overlap": "a global location may be read and later written by the same instance "
               "(READ_THEN_WRITE)",
    "unmodelled": "the kernel uses something the analysis does not model",
    "unknown_range": "an access has no known byte range",
    "no_analysis": "no analysis of the kernel was available when it was launched",
    "unknown_function": "the function handle was never seen being loaded",
    "no_layout": "the parameter layout is unknown or the parameter buffer too short",
    "internal": "an internal failure of the shim",
}


@dataclass(frozen=True, slots=True)
class KernelInstance:
    """One kernel launch made during a test, with its verdict.

    ``params`` holds one unsigned value per parameter (little-endian, in layout order; empty
    when the layout is unknown), ``param_bytes`` the packed buffer the verdict was decided
    on, ``rule`` the deciding rule, ``reason`` words for people, ``source`` ``"driver"`` for
    launches seen by the shim or ``"recovery"`` for launches made through the
    ``kernelcheck_recovery`` fixture.
    """

    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    params: tuple[int, ...]
    param_bytes: bytes
    verdict: str
    rule: str
    reason: str = ""
    kernel_class: str = ""
    pid: int = 0
    image_hash: str = ""
    arch: str = ""
    source: str = "driver"

    @property
    def idempotent(self) -> bool:
        """Whether the instance is proven idempotent."""
        return self.verdict == "idempotent"

    def describe(self) -> str:
        """``kernel grid=(...) block=(...) params=(...)`` for messages."""
        if self.params:
            shown = ", ".join(hex(v) if v > 4096 else str(v) for v in self.params)
        else:
            shown = self.param_bytes.hex() or "unknown"
        return (f"{self.kernel} grid={self.grid} block={self.block} params=({shown})")

    def to_json(self) -> dict:
        return {"kernel": self.kernel, "grid": list(self.grid), "block": list(self.block),
                "params": list(self.params), "param_bytes": self.param_bytes.hex(),
                "verdict": self.verdict, "rule": self.rule, "reason": self.reason,
                "class": self.kernel_class, "pid": self.pid, "image_hash": self.image_hash,
                "arch": self.arch, "source": self.source}


def read_records(path: str | os.PathLike, start: int = 0) -> tuple[list[dict], int]:
    """The complete JSON lines of ``path`` from byte ``start``, and where they end."""
    try:
        with open(path, "rb") as handle:
            handle.seek(start)
            data = handle.read()
    except FileNotFoundError:
        return [], start
    end = data.rfind(b"\n") + 1      # a line still being written is read next time
    records = []
    for line in data[:end].splitlines():
        try:
            records.append(json.loads(line))
        except ValueError:
            continue
    return records, start + end


class InstanceExplainer:
    """Turns shim records into :class:`KernelInstance` values, using the analysis cache.

    Parameters
    ----------
    cache_directory : path, optional
        The cache the shim reads (``KERNELCHECK_CACHE_DIR``, else the default). An unusable
        cache only costs the explanations: verdicts are the shim's.
    """

    def __init__(self, cache_directory: str | os.PathLike | None = None) -> None:
        self._directory = cache_directory or os.environ.get("KERNELCHECK_CACHE_DIR") or None
        self._cache = None
        self._failures = 0
        self._kernels: dict[tuple[str, str, str], object] = {}

    def _cached(self, digest: str, name: str, arch: str):
        key = (digest, name, arch)
        if key in self._kernels:
            return self._kernels[key]
        entry = None
        # A busy database (the helper writing) fails an open or a read now and then: try
        # again at the next record, and give up only after a few failures.
        if digest and self._failures < _MAX_CACHE_FAILURES:
            try:
                if self._cache is None:
                    from kernelcheck.cache import AnalysisCache
                    self._cache = AnalysisCache(Path(self._directory) if self._directory
                                                else None)
                entry = self._cache.get(digest, name, arch)
            except Exception as error:  # noqa: BLE001  (no cache: records stay unexplained)
                self._failures += 1
                self.close()
                if self._failures == _MAX_CACHE_FAILURES:
                    print(f"kernelcheck: cannot read the analysis cache ({error}): kernel "
                          f"instances are listed without parameters and reasons",
                          file=sys.stderr)
        if entry is not None:
            self._kernels[key] = entry
        return entry

    def explain(self, record: dict) -> KernelInstance:
        """The instance of one shim record."""
        raw = bytes.fromhex(record.get("params", ""))
        grid = tuple(int(x) for x in record.get("grid", (1, 1, 1)))
        block = tuple(int(x) for x in record.get("block", (1, 1, 1)))
        verdict, rule = record.get("verdict", "not_proven"), record.get("rule", "")
        entry = self._cached(record.get("image_hash", ""), record["kernel"],
                             record.get("arch", ""))
        params: tuple[int, ...] = ()
        reasons: list[str] = []
        kernel_class = ""
        if entry is not None:
            kernel_class = entry.kernel_class
            if len(raw) >= entry.param_size:
                params = tuple(int.from_bytes(raw[o:o + s], "little") for o, s in entry.layout)
            if verdict != "idempotent":
                detail = self._detail(entry, raw, grid, block, verdict)
                if detail:
                    reasons.append(detail)
                reasons += [r for r in entry.reasons if r not in reasons]
        if record.get("params_truncated"):
            reasons.append("parameter bytes beyond 4096 not recorded")
        words = RULE_TEXT.get(rule, rule)
        reason = f"{verdict} ({rule}: {words})"
        if reasons:
            reason += ": " + "; ".join(reasons[:4])
        return KernelInstance(record["kernel"], grid, block, params, raw, verdict, rule,
                              reason, kernel_class, int(record.get("pid", 0)),
                              record.get("image_hash", ""), record.get("arch", ""))

    @staticmethod
    def _detail(entry, raw: bytes, grid, block, verdict: str) -> str:
        try:
            from kernelcheck.launch.check import LaunchCheck
            from kernelcheck.launch.evaluate import evaluate

            check = LaunchCheck.from_bytes(entry.check_blob, entry.kernel, entry.param_size)
            result = evaluate(check, raw, grid, block)
        except Exception:  # noqa: BLE001  (an explanation is optional)
            return ""
        return " ".join(result.detail.split()) if result.verdict == verdict else ""

    def close(self) -> None:
        """Close the cache connection (it is reopened when needed)."""
        if self._cache is not None:
            try:
                self._cache.close()
            except Exception:  # noqa: BLE001
                pass
            self._cache = None
