"""Fault-injection campaigns on fixture instances, with and without recovery.

Each trial draws, from its own seed (``numpy.random.default_rng([seed, trial])``, so results
do not depend on how trials are split among workers), a target instance and a fault of the
campaign's model, in the trial's instruction group (groups take turns by trial number). The
instance runs from its initial memory:

* without recovery, the outcome is **masked** (memory equals the golden run's), **SDC**
  (silent data corruption: it differs) or **DUE** (detected unrecoverable error: memory
  fault, trap, timeout or launch failure);
* with recovery, through a :class:`~kernelcheck.recovery.session.RecoverySession`, it is
  **masked** (no fault detected, memory golden), **recovered** (a fault was detected and
  memory ends golden), **unrecovered** (detected, memory not golden) or **SDC** (not
  detected, memory not golden).

Memory is compared over every allocation; for the memory models the flipped byte itself is
left out unless the instance writes it (the flip is the fault, not its effect).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from kernelcheck.analysis.intervals import IntervalSet
from kernelcheck.emu.profile import profile_launch
from kernelcheck.errors import KernelcheckError
from kernelcheck.faults.groups import group_sites
from kernelcheck.faults.models import Fault, Golden, before_launch, draw_fault, fault_launch
from kernelcheck.faults.targets import Target, load_target
from kernelcheck.recovery.device import DeviceError, EmulatorDevice
from kernelcheck.recovery.policy import RecoveryConfig
from kernelcheck.recovery.session import KernelModule, RecoverySession

__all__ = ["TrialResult", "Campaign", "OUTCOMES", "RECOVERY_OUTCOMES", "outcome_table"]

OUTCOMES = ("masked", "SDC", "DUE")
RECOVERY_OUTCOMES = ("masked", "recovered", "unrecovered", "SDC")


@dataclass(frozen=True, slots=True)
class TrialResult:
    """One trial: where the fault went and what became of it."""

    trial: int
    target: str
    kernel: str
    model: str
    group: str
    fault: str
    outcome: str
    recovered_outcome: str = ""
    verdict: str = ""
    plan: str = ""
    detected_by: str = ""
    replayed: str = ""
    saved_bytes: int = 0
    written_allocation_bytes: int = 0
    seconds_launch: float = 0.0
    seconds_overhead: float = 0.0


@dataclass(slots=True)
class _Prepared:
    target: Target
    golden: Golden
    golden_memory: dict


class Campaign:
    """Targets, their golden runs, and trials.

    Parameters
    ----------
    targets : sequence of (kernel, instance_number, disjoint)
        Fixture instances (see :func:`kernelcheck.faults.targets.load_target`).
    config : RecoveryConfig, optional
        Recovery settings for trials with recovery.
    path : Path, optional
        The PTX file to run the kernels from (each fixture's own file by default).

    Targets whose golden run fails (an instance that faults by itself) are left out.
    """

    def __init__(self, targets: Sequence[tuple[str, int, bool]],
                 config: RecoveryConfig | None = None, path: Path | None = None) -> None:
        self.config = config or RecoveryConfig(redundant="replayable")
        self._specs = tuple(targets)
        self._path = path
        self._prepared: dict[int, _Prepared | None] = {}
        self._checks: dict = {}

    @property
    def specs(self) -> tuple[tuple[str, int, bool], ...]:
        return self._specs

    def prepared(self, k: int) -> _Prepared | None:
        """Target ``k`` with its golden run (computed once); ``None`` if it cannot run."""
        if k in self._prepared:
            return self._prepared[k]
        kernel, number, disjoint = self._specs[k]
        try:
            t = load_target(kernel, number, disjoint=disjoint, path=self._path)
            profile, result = profile_launch(t.emu, t.program, t.entry, trace=True,
                                             **t.launch_kwargs())
        except (KernelcheckError, KeyError, ValueError, OverflowError):
            self._prepared[k] = None
            return None
        golden = Golden(profile, group_sites(t.program), result.trace.read_bytes.ranges,
                        result.trace.written_bytes.ranges, result.steps)
        p = _Prepared(t, golden, t.emu.memory.snapshot())
        self._prepared[k] = p
        return p

    def draw(self, trial: int, seed: int, model: str, groups: Sequence[str]):
        """The target index and fault of ``trial`` (``None`` fault: no site anywhere)."""
        rng = np.random.default_rng([seed, trial])
        group = groups[trial % len(groups)]
        order = rng.permutation(len(self._specs))
        for k in order:
            p = self.prepared(int(k))
            if p is None:
                continue
            fault = draw_fault(model, p.golden, p.target.program, rng, group)
            if fault is not None:
                return int(k), fault
        return None, None

    def run_trial(self, trial: int, seed: int, model: str, groups: Sequence[str],
                  recover: bool = True) -> TrialResult | None:
        """Run one trial (without, and if asked with, recovery)."""
        k, fault = self.draw(trial, seed, model, groups)
        if fault is None:
            return None
        p = self.prepared(k)
        t = p.target
        limit = 4 * p.golden.steps + 256
        outcome = self._plain(p, fault, limit)
        row = TrialResult(trial, t.name, t.kernel, model, fault.group, fault.describe(),
                          outcome)
        if not recover:
            return row
        return self._recovered(p, fault, limit, row)

    # ------------------------------------------------------------------ trials
    def _golden(self, p: _Prepared, fault: Fault) -> bool:
        now = p.target.emu.memory.snapshot()
        if fault.model in ("mem-before", "mem-after") and \
                fault.address not in IntervalSet(p.golden.written_bytes):
            now = _unflip(now, fault.address, p.golden_memory)
        return now == p.golden_memory

    def _plain(self, p: _Prepared, fault: Fault, limit: int) -> str:
        t = p.target
        t.reset()
        device = EmulatorDevice(t.emu, step_limit=limit)
        before_launch(fault, t.emu)
        device.arm(fault_launch(fault))
        try:
            device.launch(t.program, t.entry, t.grid, t.block, _raw(t), t.shared_bytes)
        except DeviceError:
            return "DUE"
        return "masked" if self._golden(p, fault) else "SDC"

    def _recovered(self, p: _Prepared, fault: Fault, limit: int,
                   row: TrialResult) -> TrialResult:
        t = p.target
        t.reset()
        device = EmulatorDevice(t.emu, step_limit=limit)
        session = RecoverySession(device, self.config, check_cache=self._checks)
        before_launch(fault, t.emu)
        device.arm(fault_launch(fault))
        module = KernelModule(t.module, t.program)
        try:
            session.launch(module, t.entry, grid=t.grid, block=t.block, params=t.values,
                           shared_bytes=t.shared_bytes)
            report = session.synchronize()
        except KernelcheckError as err:
            raise KernelcheckError(f"trial {row.trial} on {t.name}: {err}") from err
        detected = bool(report.detections)
        good = self._golden(p, fault)
        if detected:
            outcome = "recovered" if good and report.all_recovered else "unrecovered"
        else:
            outcome = "masked" if good else "SDC"
        rec = report.launches[0]
        replayed = ";".join(",".join(map(str, r.launches)) for r in report.replays)
        return TrialResult(**{**asdict(row), "recovered_outcome": outcome,
                              "verdict": rec.verdict, "plan": rec.plan_mode,
                              "detected_by": ",".join(d.kind for d in report.detections),
                              "replayed": replayed, "saved_bytes": rec.saved_bytes,
                              "written_allocation_bytes": rec.written_allocation_bytes or 0,
                              "seconds_launch": rec.seconds_launch,
                              "seconds_overhead": rec.seconds_overhead})

    def run(self, trials: int, seed: int, model: str, groups: Sequence[str],
            recover: bool = True, start: int = 0) -> tuple[TrialResult, ...]:
        """Trials ``start .. start + trials - 1``."""
        rows = []
        for trial in range(start, start + trials):
            row = self.run_trial(trial, seed, model, groups, recover)
            if row is not None:
                rows.append(row)
        return tuple(rows)


def _raw(t: Target) -> bytes:
    from kernelcheck.emu.emulator import pack_params
    return pack_params(t.program.function(t.entry).function, t.values).tobytes()


def _unflip(snapshot: dict, address: int, golden: dict) -> dict:
    out = dict(snapshot)
    for base, data in snapshot.items():
        if base <= address < base + len(data):
            fixed = bytearray(data)
            fixed[address - base] = golden[base][address - base]
            out[base] = bytes(fixed)
    return out


def outcome_table(rows: Sequence[TrialResult]) -> list[dict]:
    """Outcome counts per (model, group): without and with recovery."""
    table: dict = {}
    for r in rows:
        key = (r.model, r.group)
        entry = table.setdefault(key, {"model": r.model, "group": r.group, "trials": 0,
                                       **{o: 0 for o in OUTCOMES},
                                       **{f"rec_{o}": 0 for o in RECOVERY_OUTCOMES}})
        entry["trials"] += 1
        entry[r.outcome] += 1
        if r.recovered_outcome:
            entry[f"rec_{r.recovered_outcome}"] += 1
    return [table[k] for k in sorted(table)]


def to_csv(rows: Sequence[TrialResult]) -> str:
    """The trials as CSV (one row per trial)."""
    out = io.StringIO()
    fields = list(TrialResult.__dataclass_fields__)
    writer = csv.DictWriter(out, fieldnames=fields)
    writer.writeheader()
    for r in rows:
        writer.writerow(asdict(r))
    return out.getvalue()
