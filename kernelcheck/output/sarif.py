"""SARIF 2.1.0 logs of kernelcheck's findings, for GitHub code scanning and SARIF viewers.

A log has one run (tool ``kernelcheck``) whose ``rules`` are the kinds of finding a command
reports (the kernel classes for ``analyze``, instance verdicts for ``run``, fault outcomes for
``inject``) and whose ``results`` are the findings, each with:

* ``locations``: the CUDA source file and line when the input has line information (``.loc``
  in PTX, ``-lineinfo`` in a cubin), else the PTX file and line, else the binary with the
  instruction's offset in its kernel (``address``: ``kernel+0x120``);
* ``relatedLocations``: the other instructions the finding names (the reads of a condition),
  and the PTX line or SASS offset behind a source location;
* ``logicalLocations``: the kernel (short name, demangled and mangled names).

Paths inside the current directory are written relative to ``%SRCROOT%`` (the checkout
root in CI, which is what code scanning resolves them against); others as ``file://`` URIs.
The format is the OASIS standard (https://docs.oasis-open.org/sarif/sarif/v2.1.0/); the
tests validate every log against its JSON schema.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from urllib.parse import quote

from kernelcheck import __version__

__all__ = ["SARIF_SCHEMA", "Rule", "ANALYZE_RULES", "RUN_RULES", "INJECT_RULES", "sarif_log",
           "analyze_results", "run_sarif", "inject_sarif"]

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


class Rule:
    """One kind of finding: its id, what it is called, its level and a description."""

    def __init__(self, key: str, rule_id: str, name: str, level: str, text: str) -> None:
        self.key, self.id, self.name, self.level, self.text = key, rule_id, name, level, text

    def to_json(self) -> dict:
        return {"id": self.id, "name": self.name,
                "shortDescription": {"text": self.text},
                "defaultConfiguration": {"level": self.level},
                "help": {"text": f"{self.text} (kernelcheck docs/user-guide.md, 'Use in CI')"}}


#: The kernel classes as rules (``analyze``).
ANALYZE_RULES = (
    Rule("always", "KC000", "AlwaysIdempotent", "none",
         "every instance of the kernel is idempotent"),
    Rule("conditional", "KC001", "ConditionallyIdempotent", "warning",
         "the kernel is idempotent unless its arguments make a written range overlap a "
         "read range"),
    Rule("never", "KC002", "NeverIdempotent", "error",
         "no instance of the kernel is idempotent (a global location is read and then "
         "written, or a non-idempotent atomic)"),
    Rule("not_proven", "KC003", "NotProven", "warning",
         "the analysis could not prove the kernel's instances idempotent"),
)


#: Instance verdicts as rules (``run``).
RUN_RULES = (
    Rule("idempotent", "KC100", "IdempotentInstances", "none",
         "launches of the kernel that are idempotent"),
    Rule("not_idempotent", "KC101", "NotIdempotentInstances", "warning",
         "launches of the kernel that read global memory they later write"),
    Rule("not_proven", "KC102", "NotProvenInstances", "note",
         "launches of the kernel not proven idempotent"),
)

#: Fault-injection outcomes as rules (``inject``).
INJECT_RULES = (
    Rule("masked", "KC200", "MaskedFaults", "none", "injected faults with no effect"),
    Rule("SDC", "KC201", "SilentDataCorruption", "error",
         "injected faults that silently corrupted the output"),
    Rule("DUE", "KC202", "DetectedUnrecoverableError", "warning",
         "injected faults that stopped the launch (detected, not recovered)"),
    Rule("recovered", "KC203", "RecoveredFaults", "none",
         "injected faults detected and recovered by replay"),
    Rule("unrecovered", "KC204", "UnrecoveredFaults", "error",
         "injected faults detected but not recovered"),
)


def _uri(path: str, root: Path) -> dict:
    """``artifactLocation`` of ``path``: relative to ``%SRCROOT%`` when under ``root``."""
    absolute = Path(os.path.abspath(path))
    try:
        relative = absolute.relative_to(root)
    except ValueError:
        return {"uri": absolute.as_uri()}
    return {"uri": quote(relative.as_posix()), "uriBaseId": "%SRCROOT%"}


def _physical(place: dict, root: Path) -> list[dict]:
    """The SARIF locations of one place: source line first, then PTX line or SASS offset."""
    out = []
    if place.get("source_file") and place.get("source_line"):
        out.append({"physicalLocation": {
            "artifactLocation": _uri(place["source_file"], root),
            "region": {"startLine": max(1, int(place["source_line"]))}}})
    if place.get("line"):
        out.append({"physicalLocation": {
            "artifactLocation": _uri(place["file"], root),
            "region": {"startLine": max(1, int(place["line"]))}}})
    elif place.get("offset") is not None:
        offset = int(place["offset"])
        out.append({"physicalLocation": {
            "artifactLocation": _uri(place["file"], root),
            "address": {"kind": "instruction", "relativeAddress": offset,
                        "name": f"/*{offset:04x}*/ {place.get('instruction', '')}".strip(),
                        "fullyQualifiedName": f"{place.get('kernel')}+{offset:#x}"}}})
    if not out:
        out.append({"physicalLocation": {"artifactLocation": _uri(place["file"], root)}})
    return out


def _message(place: dict) -> str:
    role = place.get("role", "")
    what = place.get("instruction", "")
    where = []
    if place.get("line"):
        where.append(f"{os.path.basename(place['file'])}:{place['line']}")
    if place.get("offset") is not None:
        where.append(f"/*{int(place['offset']):04x}*/")
    return " ".join(x for x in (role, what, *where) if x) or "kernel"


def _result(rule: Rule, index: int, message: str, places: Sequence[dict], logical: dict,
            properties: dict, root: Path, fail_on: Iterable[str]) -> dict:
    locations: list[dict] = []
    related: list[dict] = []
    for place in places:
        found = _physical(place, root)
        if not locations:
            first = dict(found[0])
            first["logicalLocations"] = [logical]
            locations.append(first)
            found = found[1:]
        for item in found:
            related.append({**item, "id": len(related) + 1,
                            "message": {"text": _message(place)}})
    if not locations:
        locations.append({"logicalLocations": [logical]})
    level = "error" if rule.key in set(fail_on) else rule.level
    result = {"ruleId": rule.id, "ruleIndex": index, "level": level,
              "kind": "pass" if rule.level == "none" and level == "none" else "fail",
              "message": {"text": message}, "locations": locations,
              "properties": properties}
    if related:
        result["relatedLocations"] = related
    return result


def analyze_results(records: Iterable[dict], fail_on: Iterable[str] = ()) -> list[dict]:
    """SARIF results of ``analyze`` records (:mod:`kernelcheck.output.records`)."""
    root = Path(os.getcwd())
    index = {rule.key: k for k, rule in enumerate(ANALYZE_RULES)}
    fail_on = tuple(fail_on)
    out = []
    for record in records:
        kind = record.get("class", "not_proven")
        rule = ANALYZE_RULES[index.get(kind, index["not_proven"])]
        logical = {"name": record.get("name") or record.get("kernel") or "(image)",
                   "kind": "function"}
        if record.get("demangled"):
            logical["fullyQualifiedName"] = record["demangled"]
        if record.get("kernel"):
            logical["decoratedName"] = record["kernel"]
        properties = {k: record.get(k) for k in ("kernel", "class", "verdict", "reason",
                                                 "image", "arch", "language")}
        for item in record.get("results") or [{"message": record.get("reason", ""),
                                               "locations": []}]:
            text = f"{logical['name']}: {item['message']}"
            out.append(_result(rule, index[rule.key], text, item.get("locations", ()),
                               logical, properties, root, fail_on))
    return out


def sarif_log(results: list[dict], rules: Sequence[Rule], command: Sequence[str],
              exit_code: int | None = None, partial: bool = False) -> dict:
    """The SARIF 2.1.0 log of one run of kernelcheck."""
    root = Path(os.getcwd())
    invocation = {"executionSuccessful": not partial,
                  "commandLine": " ".join(command),
                  "workingDirectory": {"uri": root.as_uri() + "/"}}
    if exit_code is not None:
        invocation["exitCode"] = exit_code
    if partial:
        invocation["toolExecutionNotifications"] = [
            {"level": "warning", "message": {"text": "interrupted: the results are partial"}}]
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "kernelcheck", "version": __version__,
                                "semanticVersion": __version__,
                                "rules": [rule.to_json() for rule in rules]}},
            "invocations": [invocation],
            "originalUriBaseIds": {"%SRCROOT%": {"uri": root.as_uri() + "/"}},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }


def _kernel_logical(kernel: str) -> dict:
    from kernelcheck.names import name_forms, short_name

    return {"name": short_name(kernel), "fullyQualifiedName": name_forms(kernel)[0],
            "decoratedName": kernel, "kind": "function"}


def run_sarif(report, command: Sequence[str], exit_code: int | None = None) -> dict:
    """The SARIF log of a ``kernelcheck run`` report: per kernel and verdict, how many
    launches, with the kernel's class and first reasons."""
    index = {rule.key: k for k, rule in enumerate(RUN_RULES)}
    results = []
    for k in report.kernels:
        logical = _kernel_logical(k.name)
        for verdict in ("idempotent", "not_idempotent", "not_proven"):
            count = getattr(k, verdict)
            if not count:
                continue
            rule = RUN_RULES[index[verdict]]
            why = f": {k.reasons[0]}" if k.reasons and verdict != "idempotent" else ""
            text = (f"{logical['name']}: {count} launch(es) {verdict.replace('_', ' ')} "
                    f"(class {k.kernel_class or 'unknown'}){why}")
            results.append({"ruleId": rule.id, "ruleIndex": index[verdict],
                            "level": rule.level,
                            "kind": "pass" if rule.level == "none" else "fail",
                            "message": {"text": text},
                            "locations": [{"logicalLocations": [logical]}],
                            "occurrenceCount": count,
                            "properties": {"kernel": k.name, "class": k.kernel_class,
                                           "verdict": verdict, "reason": why[2:],
                                           "image_hash": k.image_hash, "arch": k.arch,
                                           "rules": dict(k.rules)}})
    return sarif_log(results, RUN_RULES, command, exit_code)


def inject_sarif(rows, classes: dict, command: Sequence[str], fail_on: Iterable[str] = (),
                 partial: bool = False) -> dict:
    """The SARIF log of a campaign: per kernel, instruction group and outcome, the count of
    trials, with the kernel's class."""
    from collections import Counter

    index = {rule.key: k for k, rule in enumerate(INJECT_RULES)}
    counts: Counter = Counter()
    for row in rows:
        outcome = row.recovered_outcome or row.outcome
        counts[(row.kernel, row.model, row.group, outcome)] += 1
    fail_on = set(fail_on)
    results = []
    for (kernel, model, group, outcome), count in sorted(counts.items()):
        rule = INJECT_RULES[index.get(outcome, index["SDC"])]
        level = "error" if outcome in fail_on else rule.level
        logical = _kernel_logical(kernel)
        results.append({"ruleId": rule.id, "ruleIndex": index[rule.key], "level": level,
                        "kind": "pass" if level == "none" else "fail",
                        "message": {"text": f"{logical['name']}: {count} trial(s) of model "
                                            f"{model}, group {group}: {outcome}"},
                        "locations": [{"logicalLocations": [logical]}],
                        "occurrenceCount": count,
                        "properties": {"kernel": kernel, "class": classes.get(kernel, ""),
                                       "verdict": outcome, "reason": f"{model} {group}",
                                       "model": model, "group": group}})
    return sarif_log(results, INJECT_RULES, command, partial=partial)
