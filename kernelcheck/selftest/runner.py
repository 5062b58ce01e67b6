"""Run the self-test: choose the driver, run each section in a worker process under its cap.

:func:`run_selftest` opens the device once in a probe process (which driver, which GPU or
the stand-in), then runs the chosen sections one after another, each in its own process
(:mod:`kernelcheck.selftest.worker`) with the driver's environment. The run has a budget
(``--budget``, default 250 s, 160 s with ``--quick``); each section gets the share of what
is left that its weight gives it, so time a skipped or fast section did not use goes to the
later ones. A worker past its cap by more than :data:`GRACE_SECONDS` is ended, and its section
is in error.

``--device`` asks for real hardware: the system's driver, and an error (exit status 2) when
the device found is the stand-in or none.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from kernelcheck.selftest.results import SectionResult, SelftestReport

__all__ = ["SECTIONS", "SelftestOptions", "run_selftest", "GRACE_SECONDS"]

#: Sections in the order they run, with the weight of their share of the budget.
SECTIONS = {"reexec": 3.0, "emulator": 1.0, "sass": 2.0, "recovery": 2.0, "pytorch": 3.0,
            "launch": 1.0}
#: How long a worker may overrun its cap before it is ended.
GRACE_SECONDS = 20.0
DEFAULT_BUDGET, QUICK_BUDGET = 250.0, 160.0


@dataclass(slots=True)
class SelftestOptions:
    """The settings of one self-test run (the command line's options)."""

    sections: tuple[str, ...] = tuple(SECTIONS)
    quick: bool = False
    device: bool = False
    driver: str = "auto"
    seed: int = 1
    cases: tuple[str, ...] = ()
    assume_idempotent: tuple[str, ...] = ()
    fixtures: str | None = None
    budget: float | None = None
    random_per_kernel: int | None = None
    trials: int | None = None
    extra: dict = field(default_factory=dict)

    def worker_options(self) -> dict:
        """What every section's worker gets (JSON)."""
        out = {k: v for k, v in asdict(self).items()
               if k not in ("sections", "extra", "device")}
        out["device_required"] = self.device
        out["fixtures_given"] = self.fixtures is not None
        out.update(self.extra)
        return {k: v for k, v in out.items() if v is not None}


def _environment(options: SelftestOptions) -> tuple[dict, str]:
    from kernelcheck.shim.driver_choice import driver_environment

    choice = "system" if options.device else options.driver
    env, line, _ = driver_environment(choice, os.environ)
    env.pop("LD_PRELOAD", None)
    return env, line


def _worker(section: str, options: dict, seconds: float, env: dict) -> SectionResult:
    """Run one section in a worker process; its result, or an error saying why none came."""
    with tempfile.TemporaryDirectory(prefix="kc-selftest-") as tmp:
        out = Path(tmp) / "result.json"
        request = json.dumps({"section": section, "options": options, "seconds": seconds,
                              "out": str(out)})
        try:
            proc = subprocess.run([sys.executable, "-m", "kernelcheck.selftest.worker"],
                                  input=request, env=env, capture_output=True, text=True,
                                  timeout=seconds + GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            return SectionResult.error(section, f"exceeded its time cap of {seconds:.0f} s "
                                                f"by {GRACE_SECONDS:.0f} s and was ended")
        if out.exists():
            result = SectionResult.from_json(json.loads(out.read_text()))
            if result.status == "error" and proc.stderr.strip():
                tail = proc.stderr.strip().splitlines()[-1]
                if tail not in result.reason:
                    result.notes.append(f"worker stderr: {tail}")
            return result
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return SectionResult.error(section, f"worker exited with status {proc.returncode}: "
                                            f"{tail}")


def run_selftest(options: SelftestOptions, progress=None) -> SelftestReport:
    """Run the self-test; ``progress(line)`` is told what starts and ends."""
    from kernelcheck import __version__
    from kernelcheck.errors import KernelcheckError

    say = progress or (lambda line: None)
    start = time.monotonic()
    budget = options.budget or (QUICK_BUDGET if options.quick else DEFAULT_BUDGET)
    report = SelftestReport([], {"description": "none"}, options.worker_options(),
                            version=__version__)
    report.options["sections"] = list(options.sections)
    try:
        env, driver_line = _environment(options)
    except KernelcheckError as error:
        report.sections = [SectionResult.error(s, f"no driver: {error}")
                           for s in options.sections]
        report.seconds = time.monotonic() - start
        return report
    say(driver_line)
    probe = _worker("probe", report.options, 60.0, env)
    if probe.status == "error":
        report.sections = [SectionResult.error(s, probe.reason) for s in options.sections]
        report.seconds = time.monotonic() - start
        return report
    report.device = dict(probe.figures["device"], driver_line=driver_line)
    say(f"device: {report.device['description']}")
    if options.device and report.device.get("standin"):
        reason = "--device asks for a GPU, and the driver found is kernelcheck's stand-in"
        report.sections = [SectionResult.error(s, reason) for s in options.sections]
        report.seconds = time.monotonic() - start
        return report
    worker_options = dict(report.options, device_info=report.device)
    pending = list(options.sections)
    for section in options.sections:
        left = budget - (time.monotonic() - start)
        weights = sum(SECTIONS.get(s, 1.0) for s in pending)
        cap = max(5.0, left * SECTIONS.get(section, 1.0) / weights)
        say(f"{section}: running (cap {cap:.0f} s)")
        section_start = time.monotonic()
        result = _worker(section, worker_options, cap, env)
        # A section that lost its device context (a sticky error on a GPU) says where to
        # go on; a fresh process gets a fresh context.
        while result.figures.get("resume_at") is not None:
            left_cap = cap - (time.monotonic() - section_start)
            if left_cap < 5.0:
                result.capped = True
                break
            say(f"{section}: device context lost; going on in a new process")
            resumed = dict(worker_options, resume_at=result.figures["resume_at"],
                           previous=result.to_json())
            result = _worker(section, resumed, left_cap, env)
        result.seconds = time.monotonic() - section_start
        say(f"{section}: {result.status} ({result.passed} passed, {result.failed} failed, "
            f"{result.seconds:.0f} s)")
        report.sections.append(result)
        pending.remove(section)
    report.seconds = time.monotonic() - start
    return report
