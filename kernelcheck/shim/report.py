"""What the shim counted, merged over the processes of one run, and printed for people.

Each process the shim was loaded into writes ``shim-<pid>.json`` at exit (log.c); this
module merges them per kernel (image hash, architecture, name), adds the kernel class and
reasons from the analysis cache, and prints the summary ``kernelcheck run`` ends with.

Launches that came before their kernel's analysis was ready were counted not proven
(``no_analysis``) and kept by the shim (deferred.c): when the analysis is in the cache by
the time the report is read, each is decided here with the shim's own C evaluator
(:func:`kernelcheck.shim.native.native_evaluate`) and moved to its verdict, counted as
``decided_at_exit``. Those launches ran as not proven: under recovery they were saved as
such. The verdict at exit tells what they were.
Under ``kernelcheck run --recover`` each process also writes ``recover-<pid>.json``
(recover.c): launches, saves and bytes per verdict class, faults, recovered, unrecovered.
"""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass
from pathlib import Path

__all__ = ["KernelCounts", "RecoveryCounts", "RunReport", "read_reports", "format_report",
           "pending_kernels"]

VERDICTS = ("idempotent", "not_idempotent", "not_proven")


@dataclass(frozen=True, slots=True)
class KernelCounts:
    """Instances of one kernel by verdict, with the deciding rules and the kernel's class."""

    name: str
    image_hash: str
    arch: str
    idempotent: int
    not_idempotent: int
    not_proven: int
    rules: tuple[tuple[str, int], ...]
    kernel_class: str = ""
    reasons: tuple[str, ...] = ()
    decided_at_exit: int = 0

    @property
    def instances(self) -> int:
        return self.idempotent + self.not_idempotent + self.not_proven

    @property
    def without_analysis(self) -> int:
        """Launches still not proven because no analysis of the kernel was ready."""
        return dict(self.rules).get("no_analysis", 0)

    def to_json(self) -> dict:
        return {"name": self.name, "image_hash": self.image_hash, "arch": self.arch,
                "instances": self.instances, "idempotent": self.idempotent,
                "not_idempotent": self.not_idempotent, "not_proven": self.not_proven,
                "rules": dict(self.rules), "class": self.kernel_class,
                "reasons": list(self.reasons), "decided_at_exit": self.decided_at_exit}


@dataclass(frozen=True, slots=True)
class RecoveryCounts:
    """What recovery through the shim did, summed over processes.

    ``launches``, ``saved_launches`` and ``saved_bytes`` are by verdict class (tuples in
    the order of ``VERDICTS``); ``unrecoverable_launches`` ran with no save that makes them
    re-executable; ``faults`` were detected (at a launch or a synchronize), of which
    ``recovered`` were replayed successfully and ``unrecovered`` were passed to the program.
    """

    launches: tuple[int, int, int]
    saved_launches: tuple[int, int, int]
    saved_bytes: tuple[int, int, int]
    unrecoverable_launches: int
    faults: int
    recovered: int
    unrecovered: int
    replayed_launches: int

    def to_json(self) -> dict:
        return {"launches": dict(zip(VERDICTS, self.launches, strict=True)),
                "saved_launches": dict(zip(VERDICTS, self.saved_launches, strict=True)),
                "saved_bytes": dict(zip(VERDICTS, self.saved_bytes, strict=True)),
                "unrecoverable_launches": self.unrecoverable_launches,
                "faults": self.faults, "recovered": self.recovered,
                "unrecovered": self.unrecovered, "replayed_launches": self.replayed_launches}


_PER_CLASS = ("launches", "saved_launches", "saved_bytes")
_TOTALS = ("unrecoverable_launches", "faults", "recovered", "unrecovered", "replayed_launches")


def _read_recovery(directory: Path, warnings: list[str]) -> RecoveryCounts | None:
    sums: dict[str, list[int]] = {key: [0, 0, 0] for key in _PER_CLASS}
    totals = dict.fromkeys(_TOTALS, 0)
    found = False
    for path in sorted(Path(directory).glob("recover-*.json")):
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            warnings.append(f"unreadable recovery report {path.name}")
            continue
        found = True
        for key in _PER_CLASS:
            for k, verdict in enumerate(VERDICTS):
                sums[key][k] += int(data.get(key, {}).get(verdict, 0))
        for key in _TOTALS:
            totals[key] += int(data.get(key, 0))
    if not found:
        return None
    return RecoveryCounts(*(tuple(sums[key]) for key in _PER_CLASS), **totals)


@dataclass(frozen=True, slots=True)
class RunReport:
    """The merged report of one ``kernelcheck run`` (``recovery``: under ``--recover``)."""

    kernels: tuple[KernelCounts, ...]
    graph_launches: int
    warnings: tuple[str, ...]
    processes: int
    recovery: RecoveryCounts | None = None

    def total(self, verdict: str) -> int:
        return sum(getattr(k, verdict) for k in self.kernels)

    @property
    def without_analysis(self) -> int:
        """Launches not proven because no analysis was ready, even at exit."""
        return sum(k.without_analysis for k in self.kernels)

    def to_json(self) -> dict:
        return {"format_version": 1, "processes": self.processes,
                "instances": sum(k.instances for k in self.kernels),
                **{v: self.total(v) for v in VERDICTS},
                "decided_at_exit": sum(k.decided_at_exit for k in self.kernels),
                "without_analysis": self.without_analysis,
                "graph_launches_not_validated": self.graph_launches,
                "kernels": [k.to_json() for k in self.kernels],
                "warnings": list(self.warnings),
                **({"recovery": self.recovery.to_json()} if self.recovery else {})}


def pending_kernels(directory: Path) -> set[tuple[str, str, str]]:
    """(image hash, architecture, name) of every kernel the shim saw without an analysis."""
    pending = set()
    for path in Path(directory).glob("shim-*.json"):
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        for k in data.get("kernels", []):
            if k.get("image_hash") and not k.get("analysed", True):
                pending.add((k["image_hash"], k["arch"], k["name"]))
    return pending


def _decide_deferred(entry: dict, cached, deferred: list) -> None:
    """Move the deferred launches of one kernel from no_analysis to their verdicts."""
    from kernelcheck.shim.native import native_evaluate

    for item in deferred:
        count = int(item.get("count", 1))
        try:
            params = bytes.fromhex(item.get("params", ""))
            decided = native_evaluate(cached.check_blob, params, item["grid"], item["block"])
        except (KeyError, ValueError, OSError):
            continue
        if decided is None or entry["rules"].get("no_analysis", 0) < count:
            continue
        verdict, rule = decided
        entry["not_proven"] -= count
        entry["rules"]["no_analysis"] -= count
        if not entry["rules"]["no_analysis"]:
            del entry["rules"]["no_analysis"]
        entry[verdict] += count
        entry["rules"][rule] = entry["rules"].get(rule, 0) + count
        entry["decided_at_exit"] += count


def read_reports(directory: Path, cache=None) -> RunReport:
    """Merge every ``shim-*.json`` in ``directory``; ``cache`` adds classes and reasons and
    decides the launches that came before their kernel's analysis."""
    merged: dict[tuple[str, str, str], dict] = {}
    graph = 0
    warnings: list[str] = []
    processes = 0
    for path in sorted(Path(directory).glob("shim-*.json")):
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            warnings.append(f"unreadable shim report {path.name}")
            continue
        processes += 1
        graph += data.get("graph_launches", 0)
        warnings += [w for w in data.get("warnings", []) if w not in warnings]
        for k in data.get("kernels", []):
            key = (k["image_hash"], k["arch"], k["name"])
            entry = merged.setdefault(key, {v: 0 for v in VERDICTS} | {
                "rules": {}, "deferred": [], "decided_at_exit": 0})
            for v in VERDICTS:
                entry[v] += k.get(v, 0)
            for rule, n in k.get("rules", {}).items():
                entry["rules"][rule] = entry["rules"].get(rule, 0) + n
            entry["deferred"] += k.get("deferred", [])
    kernels = []
    for (digest, arch, name), entry in merged.items():
        cls, reasons = "", ()
        if cache is not None and digest:
            cached = cache.get(digest, name, arch)
            if cached is not None:
                cls, reasons = cached.kernel_class, cached.reasons
                _decide_deferred(entry, cached, entry["deferred"])
            else:
                status = cache.image_status(digest, arch)
                if status is not None and status[0] == "failed":
                    cls, reasons = "not_proven", (f"analysis failed: {status[1]}",)
                    # Not a matter of time: waiting or warming the cache would not help.
                    waited = entry["rules"].pop("no_analysis", 0)
                    if waited:
                        entry["rules"]["analysis_failed"] = waited
        kernels.append(KernelCounts(name, digest, arch, entry["idempotent"],
                                    entry["not_idempotent"], entry["not_proven"],
                                    tuple(sorted(entry["rules"].items())), cls, reasons,
                                    entry["decided_at_exit"]))
    kernels.sort(key=lambda k: (-k.instances, k.name))
    recovery = _read_recovery(directory, warnings)
    return RunReport(tuple(kernels), graph, tuple(warnings), processes, recovery)


def format_report(report: RunReport, width: int = 100) -> str:
    """The text summary: totals, then one line per kernel with its rules and reasons."""
    n = sum(k.instances for k in report.kernels)
    lines = [f"kernelcheck: {len(report.kernels)} kernels seen, {n} instances: "
             f"{report.total('idempotent')} idempotent, "
             f"{report.total('not_idempotent')} not idempotent, "
             f"{report.total('not_proven')} not proven"]
    at_exit = sum(k.decided_at_exit for k in report.kernels)
    if at_exit:
        lines.append(f"kernelcheck: {at_exit} of them launched before their kernel's analysis "
                     f"was ready: decided at exit (they ran as not proven)")
    if report.graph_launches:
        lines.append(f"kernelcheck: {report.graph_launches} CUDA graph launches "
                     f"(not validated: their kernels never pass cuLaunchKernel)")
    if report.kernels:
        from kernelcheck.names import short_name

        name_w = min(40, max(len(short_name(k.name)) for k in report.kernels))
        lines.append(f"  {'kernel':<{name_w}} {'class':<12} {'inst':>6} {'idem':>6} "
                     f"{'not_idem':>8} {'not_prov':>8}  rules")
        for k in report.kernels:
            name = short_name(k.name)
            name = name if len(name) <= name_w else name[:name_w - 1] + "~"
            rules = ", ".join(f"{r} {c}" for r, c in k.rules)
            lines.append(f"  {name:<{name_w}} {k.kernel_class or '-':<12} {k.instances:>6} "
                         f"{k.idempotent:>6} {k.not_idempotent:>8} {k.not_proven:>8}  {rules}")
            indent = " " * (name_w + 5)
            for reason in list(dict.fromkeys(k.reasons))[:2]:
                lines += textwrap.wrap(_shorten(reason, 3 * width), width + len(indent),
                                       initial_indent=indent, subsequent_indent=indent + "  ")
    if report.without_analysis:
        lines.append(f"kernelcheck: {report.without_analysis} launches had no analysis in "
                     f"time (rule no_analysis): run `kernelcheck analyze --warm-cache FILE` on "
                     f"the program's kernels beforehand, or give `--analysis-wait` more "
                     f"seconds")
    if report.recovery is not None:
        lines += _format_recovery(report.recovery)
    for w in report.warnings:
        lines.append(f"kernelcheck: warning: {w}")
    return "\n".join(lines)


def _shorten(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters, its middle elided: reasons differ at their
    ends (which access of the pair), so both ends are kept."""
    if len(text) <= width:
        return text
    head = (width - 3) // 2
    return f"{text[:head]} … {text[len(text) - (width - 3 - head):]}"


def _format_recovery(r: RecoveryCounts) -> list[str]:
    saved = ", ".join(f"{v.replace('_', ' ')} {n} launches / {b} bytes"
                      for v, n, b in zip(VERDICTS, r.saved_launches, r.saved_bytes,
                                         strict=True))
    return [f"kernelcheck: recovery: {sum(r.launches)} launches, saved before launch: "
            f"{saved}; {r.unrecoverable_launches} not made re-executable",
            f"kernelcheck: recovery: {r.faults} faults detected, {r.recovered} recovered "
            f"({r.replayed_launches} launches replayed), {r.unrecovered} unrecovered"]
