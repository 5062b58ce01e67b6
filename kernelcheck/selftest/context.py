"""What a self-test section runs with: the device, the fixtures, its cases and its clock.

A :class:`SectionContext` is built by the worker process (:mod:`kernelcheck.selftest.worker`)
for one section: it holds the :class:`~kernelcheck.selftest.device.TestDevice` (``None`` when
the driver could not be initialised), the fixture corpus, the options of the run, and the
section's deadline. :meth:`SectionContext.cases` lists the instances a section checks
(``--quick``: the first expected.toml instance of every kernel; otherwise every instance and
a seeded sample of drawn ones; ``--case``: the named ones) and :meth:`reproducer` writes the
one-line command that checks one case alone.
"""

from __future__ import annotations

import shlex
import time
from dataclasses import dataclass, field
from pathlib import Path

from kernelcheck.selftest.cases import Case, find_case, fixture_cases, random_cases

__all__ = ["SectionContext", "DEFAULT_RANDOM_PER_KERNEL"]

#: Drawn instances per kernel in a full run (the soundness harness's generator).
DEFAULT_RANDOM_PER_KERNEL = 6


@dataclass(slots=True)
class SectionContext:
    """One section's device, fixtures, options and deadline (see the module docs)."""

    name: str
    device: object
    root: Path
    options: dict
    deadline: float
    notes: list[str] = field(default_factory=list)

    @property
    def quick(self) -> bool:
        return bool(self.options.get("quick"))

    @property
    def seed(self) -> int:
        return int(self.options.get("seed", 1))

    def time_left(self) -> float:
        return self.deadline - time.monotonic()

    def out_of_time(self, reserve: float = 0.0) -> bool:
        return time.monotonic() + reserve >= self.deadline

    def cases(self, *, random: bool = True) -> list[Case]:
        """The instances this run checks (see the module docs)."""
        names = self.options.get("cases") or ()
        if names:
            return [find_case(self.root, n, self.seed) for n in names]
        if self.quick:
            return fixture_cases(self.root, per_kernel=1)
        out = fixture_cases(self.root)
        if random:
            per = int(self.options.get("random_per_kernel", DEFAULT_RANDOM_PER_KERNEL))
            out += random_cases(self.root, per, self.seed)
        return out

    def reproducer(self, case: str | None, *extra: str) -> str:
        """The command that runs this section (on ``case`` alone, if given) with this run's
        settings."""
        words = ["kernelcheck", "selftest", "--section", self.name]
        if self.options.get("device_required"):
            words.append("--device")
        if case is not None:
            words += ["--case", case]
        if case is not None and "~r" in case:
            words += ["--seed", str(self.seed)]
        driver = self.options.get("driver", "auto")
        if driver != "auto":
            words += ["--driver", driver]
        if self.options.get("fixtures_given"):
            words += ["--fixtures", str(self.root)]
        words += list(extra)
        return shlex.join(words)
