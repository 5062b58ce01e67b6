"""The replay-based recovery engine for programs that launch through a :class:`Device`.

Examples
--------
A ``RecoverySession`` wraps the device: each launch is planned from its verdict
(:func:`~kernelcheck.recovery.policy.plan_launch`), its bytes are saved, it runs, faults are
detected (device errors, redundant execution, user checks) and replayed from the launch
log (:mod:`kernelcheck.recovery.window`)::

    with RecoverySession(EmulatorDevice(emu)) as s:
        mod = s.load_module(ptx_text)
        s.launch(mod, "saxpy", grid=(4, 1, 1), block=(256, 1, 1), params=[out, x, 2.0, n])
        report = s.synchronize(check=Checksum.of(...))
    report.replays, report.saved_bytes
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from kernelcheck.analysis.intervals import IntervalSet
from kernelcheck.emu.emulator import pack_params
from kernelcheck.ir.nodes import Function, Module
from kernelcheck.launch.check import LaunchCheck
from kernelcheck.launch.evaluate import InstanceVerdict, evaluate
from kernelcheck.recovery.detect import differing_bytes, read_ranges
from kernelcheck.recovery.device import Device, DeviceError
from kernelcheck.recovery.footprint import (
    Footprint,
    clip_to_allocations,
    instance_footprint,
    written_allocations,
)
from kernelcheck.recovery.policy import RecoveryConfig, SavePlan, plan_launch
from kernelcheck.recovery.report import Detection, LaunchRecord, RecoveryReport, Replay
from kernelcheck.recovery.window import WindowEntry, replay_window

__all__ = ["RecoverySession", "KernelModule", "VerdictFn"]

#: ``fn(check, function, params, grid, block, allocations) -> InstanceVerdict``
VerdictFn = Callable[..., InstanceVerdict]


@dataclass(frozen=True, slots=True)
class KernelModule:
    """A module loaded through a session: its IR and the device's handle."""

    ir: Module
    handle: object

    def function(self, name: str) -> Function:
        for f in self.ir.kernels:
            if f.name == name:
                return f
        raise KeyError(f"no kernel {name} in the module")


@dataclass(slots=True)
class _Entry:
    record_index: int
    module: KernelModule
    kernel: str
    grid: tuple
    block: tuple
    params: bytes
    shared_bytes: int
    plan: SavePlan
    footprint: Footprint
    saved: tuple[tuple[int, bytes], ...]
    check: Callable | None
    compare: tuple[tuple[int, int], ...] = field(default=())
    guard: tuple[tuple[int, int], ...] | None = None


def _size(s: IntervalSet) -> int:
    return sum(b - a for a, b in s.ranges)


def _default_verdict(check: LaunchCheck, function: Function, params: bytes, grid, block,
                     allocations) -> InstanceVerdict:
    return evaluate(check, params, grid, block, allocations)


class RecoverySession:
    """Launch, detect faults, save and replay, on one stream of a device.

    Parameters
    ----------
    device : Device
        Where launches run (:class:`~kernelcheck.recovery.device.EmulatorDevice`).
    config : RecoveryConfig, optional
        The policy settings.
    verdict : callable, optional
        ``verdict(check, function, params, grid, block, allocations) -> InstanceVerdict``;
        by default the LaunchCheck is evaluated with the allocation table.
    check_cache : dict, optional
        LaunchChecks by ``(id(module IR), kernel)``, shared between sessions (each kernel is
        analysed once).
    """

    def __init__(self, device: Device, config: RecoveryConfig | None = None, *,
                 verdict: VerdictFn | None = None, check_cache: dict | None = None) -> None:
        self.device = device
        self.config = config or RecoveryConfig()
        self._verdict = verdict or _default_verdict
        self._checks: dict[tuple[int, str], LaunchCheck] = (
            check_cache if check_cache is not None else {})
        self._log: list[_Entry] = []
        self._records: list[LaunchRecord] = []
        self._detections: list[Detection] = []
        self._replays: list[Replay] = []
        self._unrecovered: list[Detection] = []
        # Bytes the unverified launches read since they were last written (oracle, exact):
        # the part of the floor that window saves answer for; None once unknown.
        self._live_reads: IntervalSet | None = IntervalSet()

    # ------------------------------------------------------------------ context manager
    def __enter__(self) -> RecoverySession:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None and self._log:
            self.synchronize()

    # ------------------------------------------------------------------ modules
    def load_module(self, source: str | Module) -> KernelModule:
        """Load PTX text or a parsed module on the device."""
        if isinstance(source, str):
            from kernelcheck.ptx.parser import parse_ptx
            source = parse_ptx(source)
        return KernelModule(source, self.device.load_module(source))

    def launch_check(self, module: KernelModule, kernel: str) -> LaunchCheck:
        """The kernel's LaunchCheck (analysed once per kernel)."""
        key = (id(module.ir), kernel)
        check = self._checks.get(key)
        if check is None:
            from kernelcheck.analysis.summary import analyze_kernel
            check = analyze_kernel(module.ir, module.function(kernel)).launch_check
            self._checks[key] = check
        return check

    def read(self, address: int, nbytes: int) -> bytes:
        """Device bytes (what user checks read)."""
        return self.device.copy_dtoh(address, nbytes)

    # ------------------------------------------------------------------ launches
    def launch(self, module: KernelModule, kernel: str, *, grid: Sequence[int],
               block: Sequence[int], params, shared_bytes: int = 0,
               check: Callable | None = None) -> LaunchRecord:
        """Plan, save, launch and check one kernel instance.

        Parameters
        ----------
        module : KernelModule
            From :meth:`load_module`.
        kernel : str
            Entry name.
        grid, block : sequence of int
            Launch dimensions.
        params : bytes or sequence
            The parameter buffer or one value per parameter
            (:func:`kernelcheck.emu.emulator.pack_params`).
        shared_bytes : int
            Dynamic shared memory per block.
        check : callable, optional
            ``check(read) -> bool`` run after the launch (and after any replay of it).

        Returns
        -------
        LaunchRecord
        """
        t0 = time.perf_counter()
        function = module.function(kernel)
        grid3 = tuple(grid) + (1,) * (3 - len(grid))
        block3 = tuple(block) + (1,) * (3 - len(block))
        raw = pack_params(function, params).tobytes()
        allocations = self.device.allocations()
        lc = self.launch_check(module, kernel)
        verdict = self._verdict(lc, function, raw, grid3, block3, allocations)
        footprint = instance_footprint(lc, raw, grid3, block3, allocations,
                                       self.config.affine_footprint)
        written = written_allocations(lc, raw, allocations, footprint)
        plan = plan_launch(verdict.verdict, footprint, allocations, written, self.config,
                           self._pending_reads())
        t1 = time.perf_counter()
        saved = tuple((a, self.device.copy_dtoh(a, b - a)) for a, b in plan.ranges)
        t2 = time.perf_counter()
        compare = self._compare_ranges(footprint, written, allocations)
        guard = None
        if self.config.write_guard and footprint.writes is not None and \
                hasattr(self.device, "set_write_guard"):
            guard = tuple(footprint.writes.ranges)
        entry = _Entry(len(self._records), module, kernel, grid3, block3, raw, shared_bytes,
                       plan, footprint, saved, check, compare, guard)
        self._log.append(entry)
        detection = None
        oracle = None
        try:
            self._run(entry)
            measure = getattr(self.device, "launch_oracle", None)
            oracle = measure() if measure is not None else None
        except DeviceError as err:
            detection = Detection("device_error", entry.record_index, "launch", str(err))
        floor, missed = self._floor(oracle, plan)
        t3 = time.perf_counter()
        if detection is None:
            detection = self._detect(entry, verdict.verdict)
        t4 = time.perf_counter()
        written_bytes = sum(s for _, s in written) if written is not None else None
        record = LaunchRecord(entry.record_index, kernel, verdict.verdict, verdict.decided_by,
                              plan.mode, plan.nbytes, written_bytes, t3 - t2, t1 - t0,
                              t2 - t1, t4 - t3, guard is not None, floor, missed)
        self._records.append(record)
        if detection is not None and detection.kind != "redundant":
            self._detections.append(detection)
            self._recover(len(self._log) - 1, detection)
        return record

    def synchronize(self, check: Callable | None = None) -> RecoveryReport:
        """Wait for the device, run ``check(read)``; on a fault replay the launch log.

        Every launch since the last synchronization is verified afterwards (the log is
        cleared). Returns the session's report so far.
        """
        detection = None
        try:
            self.device.synchronize()
        except DeviceError as err:
            detection = Detection("device_error", None, "synchronize", str(err))
        if detection is None and check is not None and not check(self.read):
            detection = Detection("user_check", None, "synchronize", "check failed")
        if detection is not None:
            self._detections.append(detection)
            if self._log:
                self._recover(0, detection, sync_check=check)
            else:
                self._unrecovered.append(detection)
        self._log.clear()
        self._live_reads = IntervalSet()
        return self.report()

    def report(self) -> RecoveryReport:
        """The launches, detections and replays so far."""
        return RecoveryReport(tuple(self._records), tuple(self._detections),
                              tuple(self._replays), tuple(self._unrecovered))

    # ------------------------------------------------------------------ internals
    def _floor(self, oracle, plan: SavePlan) -> tuple[int | None, int | None]:
        """The launch's floor (bytes) and how many of them the plan did not save.

        The floor is the bytes whose value before the launch a replay needs and only a save
        can give back: those the launch both reads and writes (the oracle's clobbered set),
        and, with window saves, those it writes that an unverified earlier launch read since
        they were last written (a replay of the window from that launch needs them).
        ``None`` when the device measured nothing (a real GPU, an untraced emulator, a
        launch that failed), and for every later launch of the window after that.
        """
        if oracle is None:
            self._live_reads = None
            return None, None
        floor = oracle.clobbered
        if self.config.window_saves:
            live = self._live_reads
            self._live_reads = None if live is None else (
                (live - oracle.writes) | (oracle.reads - oracle.writes))
            if live is None:
                return None, None
            floor = floor | (oracle.writes & live)
        missed = floor - IntervalSet(plan.ranges)
        return _size(floor), _size(missed)

    def _pending_reads(self) -> IntervalSet | None:
        out = IntervalSet()
        for e in self._log:
            if e.footprint.reads is None:
                return None
            out = out | e.footprint.reads
        return out

    @staticmethod
    def _compare_ranges(footprint: Footprint, written, allocations):
        if footprint.writes is not None:
            return clip_to_allocations(footprint.writes, allocations)
        alloc = written if written is not None else allocations
        return tuple((int(b), int(b) + int(s)) for b, s in alloc)

    def _run(self, entry: _Entry) -> None:
        if entry.guard is not None or hasattr(self.device, "set_write_guard"):
            self.device.set_write_guard(entry.guard)
        self.device.launch(entry.module.handle, entry.kernel, entry.grid, entry.block,
                           entry.params, entry.shared_bytes)

    def _restore(self, entries) -> int:
        n = 0
        for e in reversed(entries):
            for address, data in e.saved:
                self.device.copy_htod(address, data)
                n += len(data)
        return n

    def _redundant(self, entry: _Entry, verdict: str) -> bool:
        mode = self.config.redundant
        if mode == "off" or not entry.plan.replayable:
            return False
        return verdict == "idempotent" or mode == "replayable"

    def _detect(self, entry: _Entry, verdict: str) -> Detection | None:
        if self._redundant(entry, verdict):
            first = read_ranges(self.read, entry.compare)
            self._restore([entry])
            try:
                self._run(entry)
                second = read_ranges(self.read, entry.compare)
            except DeviceError as err:
                d = Detection("device_error", entry.record_index, "launch",
                              f"in the redundant run: {err}")
                self._detections.append(d)
                self._recover(len(self._log) - 1, d)
                return None
            if first != second:
                d = Detection("redundant", entry.record_index, "launch",
                              f"{differing_bytes(first, second)} written bytes differ "
                              f"between two runs")
                self._detections.append(d)
                self._vote(entry, first, second, d)
                return None
        if entry.check is not None and not entry.check(self.read):
            return Detection("user_check", entry.record_index, "launch", "check failed")
        return None

    def _vote(self, entry: _Entry, first, second, detection: Detection) -> None:
        """Re-run until two runs agree on the written bytes (the state is the last run)."""
        seen = [first, second]
        restored = 0
        for attempt in range(1, self.config.max_replays + 1):
            restored += self._restore([entry])
            try:
                self._run(entry)
            except DeviceError:
                continue
            now = read_ranges(self.read, entry.compare)
            if now in seen:
                self._replays.append(Replay((entry.record_index,), "redundant", True,
                                            restored, attempt, "two runs agree"))
                return
            seen.append(now)
        self._replays.append(Replay((entry.record_index,), "redundant", False, restored,
                                    self.config.max_replays, "no two runs agree"))
        self._unrecovered.append(detection)

    def _recover(self, first_suspect: int, detection: Detection,
                 sync_check: Callable | None = None) -> bool:
        """Replay the shortest re-executable suffix of the log that holds ``first_suspect``."""
        every = IntervalSet((b, b + s) for b, s in self.device.allocations())
        entries = [WindowEntry(e.footprint.reads, e.footprint.writes,
                               IntervalSet((a, a + len(d)) for a, d in e.saved),
                               e.plan.replayable) for e in self._log]
        start = replay_window(entries, first_suspect, every)
        if start is None:
            self._replays.append(Replay((), detection.kind, False, 0, 0,
                                        "no re-executable suffix of the launch log"))
            self._unrecovered.append(detection)
            return False
        suffix = self._log[start:]
        indices = tuple(e.record_index for e in suffix)
        restored = 0
        problem = ""
        for attempt in range(1, self.config.max_replays + 1):
            restored += self._restore(suffix)
            problem = ""
            try:
                for e in suffix:
                    self._run(e)
                self.device.synchronize()
            except DeviceError as err:
                problem = str(err)
                continue
            failed = [e.record_index for e in suffix if e.check is not None
                      and not e.check(self.read)]
            if sync_check is not None and not sync_check(self.read):
                failed.append(-1)
            if failed:
                problem = "check still fails"
                continue
            self._replays.append(Replay(indices, detection.kind, True, restored, attempt))
            return True
        self._replays.append(Replay(indices, detection.kind, False, restored,
                                    self.config.max_replays, problem))
        self._unrecovered.append(detection)
        return False
