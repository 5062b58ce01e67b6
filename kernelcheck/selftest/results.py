"""What a self-test section found, the whole report, its table and its exit status.

A section ends in one of four states: ``passed`` (every check it ran held), ``failed`` (at
least one check did not hold; each failure names its case and a one-line command that
reproduces it), ``skipped`` (it cannot run here, with the reason: "no device" where it needs
real hardware or a CUDA PyTorch) or ``error`` (the section itself could not run: a crash, a
driver that cannot be initialised, its time cap exceeded by its process).

Exit status of ``kernelcheck selftest`` (:attr:`SelftestReport.exit_code`): 0 when every
section passed or was skipped, 1 when a check failed, 2 when no check failed but the
self-test could not run (a section in ``error``). A failed check wins over an error: it is
the news the run exists for.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Failure", "SectionResult", "SelftestReport", "EXIT_PASSED", "EXIT_FAILED",
           "EXIT_NOT_RUN", "FORMAT_VERSION"]

EXIT_PASSED, EXIT_FAILED, EXIT_NOT_RUN = 0, 1, 2
#: Version of the JSON written by ``kernelcheck selftest -o``.
FORMAT_VERSION = 1
STATES = ("passed", "failed", "skipped", "error")


@dataclass(frozen=True, slots=True)
class Failure:
    """One check that did not hold: the case, what was seen, and how to run it alone."""

    case: str
    what: str
    reproducer: str

    def to_json(self) -> dict:
        return {"case": self.case, "what": self.what, "reproducer": self.reproducer}

    @classmethod
    def from_json(cls, data: dict) -> Failure:
        return cls(str(data["case"]), str(data["what"]), str(data["reproducer"]))


@dataclass(slots=True)
class SectionResult:
    """The outcome of one section (see the module docs for ``status``).

    ``summary`` is the one line the table shows; ``figures`` holds the measured numbers
    (JSON values); ``notes`` are findings reported apart from pass/fail (outputs of atomics
    or races, instructions the ISA leaves approximate, limits met on this machine).
    """

    name: str
    status: str = "passed"
    passed: int = 0
    failed: int = 0
    summary: str = ""
    reason: str = ""
    failures: list[Failure] = field(default_factory=list)
    figures: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    capped: bool = False
    seconds: float = 0.0

    @classmethod
    def skipped(cls, name: str, reason: str) -> SectionResult:
        """A section that cannot run here, and why."""
        return cls(name, "skipped", reason=reason, summary=f"skipped: {reason}")

    @classmethod
    def error(cls, name: str, reason: str) -> SectionResult:
        """A section that could not run (the self-test's own failure)."""
        return cls(name, "error", reason=reason, summary=f"could not run: {reason}")

    def fail(self, case: str, what: str, reproducer: str) -> None:
        """Record one failed check."""
        self.failed += 1
        self.failures.append(Failure(case, " ".join(what.split()), reproducer))

    def finish(self) -> SectionResult:
        """Set ``status`` from the counts (a skipped or errored section keeps its state)."""
        if self.status in ("skipped", "error"):
            return self
        self.status = "failed" if self.failed else "passed"
        return self

    def to_json(self) -> dict:
        return {"name": self.name, "status": self.status, "passed": self.passed,
                "failed": self.failed, "summary": self.summary, "reason": self.reason,
                "failures": [f.to_json() for f in self.failures], "figures": self.figures,
                "notes": list(self.notes), "capped": self.capped,
                "seconds": round(self.seconds, 3)}

    @classmethod
    def from_json(cls, data: dict) -> SectionResult:
        status = data.get("status", "error")
        if status not in STATES:
            raise ValueError(f"section {data.get('name')!r}: unknown status {status!r}")
        return cls(str(data["name"]), status, int(data.get("passed", 0)),
                   int(data.get("failed", 0)), str(data.get("summary", "")),
                   str(data.get("reason", "")),
                   [Failure.from_json(f) for f in data.get("failures", [])],
                   dict(data.get("figures", {})), [str(n) for n in data.get("notes", [])],
                   bool(data.get("capped", False)), float(data.get("seconds", 0.0)))


@dataclass(slots=True)
class SelftestReport:
    """Every section's result, the device they ran on, and the run's settings."""

    sections: list[SectionResult]
    device: dict
    options: dict
    seconds: float = 0.0
    version: str = ""

    @property
    def exit_code(self) -> int:
        """0 all passed (or skipped), 1 a check failed, 2 the self-test could not run."""
        if any(s.status == "failed" for s in self.sections):
            return EXIT_FAILED
        if any(s.status == "error" for s in self.sections):
            return EXIT_NOT_RUN
        return EXIT_PASSED

    def to_json(self) -> dict:
        return {"format_version": FORMAT_VERSION, "kernelcheck": self.version,
                "device": self.device, "options": self.options,
                "seconds": round(self.seconds, 3), "exit_code": self.exit_code,
                "sections": [s.to_json() for s in self.sections]}

    def table(self) -> str:
        """The one table ``kernelcheck selftest`` prints, then every failure with its
        reproducer and the notes reported apart."""
        rows = ["| section | result | passed | failed | s | what was checked |",
                "|---|---|---:|---:|---:|---|"]
        for s in self.sections:
            result = s.status + (" (time cap)" if s.capped else "")
            rows.append(f"| {s.name} | {result} | {s.passed} | {s.failed} | "
                        f"{s.seconds:.0f} | {s.summary} |")
        lines = [f"device: {self.device.get('description', 'unknown')}", "", *rows]
        failures = [(s.name, f) for s in self.sections for f in s.failures]
        if failures:
            lines += ["", "failures:"]
            for name, f in failures:
                lines.append(f"  {name} {f.case}: {f.what}")
                lines.append(f"    reproduce: {f.reproducer}")
        notes = [(s.name, n) for s in self.sections for n in s.notes]
        if notes:
            lines += ["", "reported apart:"]
            lines += [f"  {name}: {n}" for name, n in notes]
        lines += ["", f"exit status {self.exit_code} ({self.seconds:.0f} s)"]
        return "\n".join(lines)
