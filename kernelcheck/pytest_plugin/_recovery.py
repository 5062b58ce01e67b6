"""The ``kernelcheck_recovery`` fixture: a recovery session that can inject faults.

:class:`RecoveryHarness` wraps a :class:`~kernelcheck.recovery.session.RecoverySession`.
Launches made through it are planned, saved, checked and replayed by the recovery engine.
With ``inject=True`` (``@pytest.mark.kernelcheck(recoverable=True)``) each launch first runs
fault-free on a snapshot of device memory to profile it (the golden run of
:mod:`kernelcheck.faults.models`), memory is put back, one fault of the chosen model is
drawn from a generator seeded with ``(seed, launch number)`` and armed on the device, and the
session's first execution of the launch runs with it. At the end of the test,
:meth:`RecoveryHarness.outcome` says which detected faults were not recovered.

Fault injection needs a device that can arm a fault (``arm``) and snapshot its memory
(``emu.memory``): :class:`~kernelcheck.recovery.device.EmulatorDevice`. On any other device
``recoverable=True`` cannot be honoured and the test fails saying so.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = ["RecoveryHarness", "InjectedFault", "RecoveryOutcome"]


@dataclass(frozen=True, slots=True)
class InjectedFault:
    """A fault armed on one launch (``launch``: the session's launch index)."""

    launch: int
    kernel: str
    model: str
    fault: str


@dataclass(frozen=True, slots=True)
class RecoveryOutcome:
    """What became of the faults of one test.

    ``unrecovered`` lists, per detected fault that was not recovered, the kernel (or
    ``None`` when the detection could not be pinned to a launch) and the reason.
    """

    injected: tuple[InjectedFault, ...]
    detected: int
    recovered: int
    unrecovered: tuple[tuple[str | None, str], ...]
    problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.unrecovered and not self.problems

    def to_json(self) -> dict:
        return {"injected": len(self.injected), "detected": self.detected,
                "recovered": self.recovered,
                "unrecovered": [{"kernel": k, "reason": r} for k, r in self.unrecovered],
                "faults": [{"launch": f.launch, "kernel": f.kernel, "model": f.model,
                            "fault": f.fault} for f in self.injected],
                "problems": list(self.problems)}


class RecoveryHarness:
    """Launch kernels through the recovery engine, with one injected fault per launch.

    Parameters
    ----------
    device : Device
        Where launches run.
    inject : bool
        Inject a fault into every launch.
    model : str
        The fault model (:data:`kernelcheck.faults.models.MODELS`); ``launch-fail`` (the
        launch stops part way and reports a failure) by default.
    seed : int
        Seed of the fault draws.
    config : RecoveryConfig, optional
        Recovery settings (default: redundant execution of replayable instances).
    group : str
        Instruction group for register fault models.
    """

    def __init__(self, device, *, inject: bool = False, model: str = "launch-fail",
                 seed: int = 0, config=None, group: str = "G_GP") -> None:
        from kernelcheck.faults.models import MODELS
        from kernelcheck.recovery import RecoveryConfig, RecoverySession

        if model not in MODELS:
            raise ValueError(f"unknown fault model {model!r}; expected one of "
                             f"{', '.join(MODELS)}")
        self.device = device
        self.inject = inject
        self.model = model
        self.seed = seed
        self.group = group
        self.session = RecoverySession(device, config or RecoveryConfig(redundant="replayable"))
        self._faults: list[InjectedFault] = []
        self._problems: list[str] = []
        self._launches = 0
        self._kernels: dict[int, str] = {}
        #: (kernel, grid, block, parameter bytes) of every launch, in order
        self.launches: list[tuple[str, tuple, tuple, bytes]] = []

    # ------------------------------------------------------------------ device passthrough
    def alloc(self, nbytes: int) -> int:
        """Allocate device memory; returns its address."""
        return self.device.alloc(nbytes)

    def copy_htod(self, address: int, data: bytes) -> None:
        """Copy host bytes to the device."""
        self.device.copy_htod(address, bytes(data))

    def copy_dtoh(self, address: int, nbytes: int) -> bytes:
        """Copy device bytes to the host."""
        return self.device.copy_dtoh(address, nbytes)

    def load_module(self, source):
        """Load PTX text (or a parsed module); returns the session's module."""
        if isinstance(source, bytes):
            source = source.decode()
        return self.session.load_module(source)

    # ------------------------------------------------------------------ launches
    def launch(self, module, kernel: str, *, grid: Sequence[int], block: Sequence[int],
               params, shared_bytes: int = 0, check: Callable | None = None):
        """Launch through the recovery session (see
        :meth:`~kernelcheck.recovery.session.RecoverySession.launch`), with a fault armed
        when injecting. Returns the session's :class:`LaunchRecord`."""
        from kernelcheck.emu.emulator import pack_params

        index = self._launches
        self._launches += 1
        self._kernels[index] = kernel
        self.launches.append((kernel, tuple(grid) + (1,) * (3 - len(grid)),
                              tuple(block) + (1,) * (3 - len(block)),
                              pack_params(module.function(kernel), params).tobytes()))
        if self.inject:
            self._arm(module, kernel, index, grid, block, params, shared_bytes)
        return self.session.launch(module, kernel, grid=grid, block=block, params=params,
                                   shared_bytes=shared_bytes, check=check)

    def synchronize(self, check: Callable | None = None):
        """Synchronize the session (replaying on a detected fault); returns its report."""
        return self.session.synchronize(check=check)

    def _arm(self, module, kernel, index, grid, block, params, shared_bytes) -> None:
        import numpy as np

        from kernelcheck.emu.emulator import pack_params
        from kernelcheck.emu.profile import profile_launch
        from kernelcheck.faults.groups import group_sites
        from kernelcheck.faults.models import Golden, before_launch, draw_fault, fault_launch

        emu = getattr(self.device, "emu", None)
        if emu is None or not hasattr(self.device, "arm"):
            self._problems.append(f"{type(self.device).__name__} cannot inject faults "
                                  f"(launch {index} of {kernel} ran without one)")
            return
        program = module.handle
        grid3 = tuple(grid) + (1,) * (3 - len(grid))
        block3 = tuple(block) + (1,) * (3 - len(block))
        raw = pack_params(module.function(kernel), params).tobytes()
        snapshot = emu.memory.snapshot()
        try:
            profile, result = profile_launch(emu, program, kernel, trace=True, grid=grid3,
                                             block=block3, params=raw,
                                             shared_bytes=shared_bytes)
        except Exception as error:  # noqa: BLE001  (the real launch will report it)
            self._problems.append(f"launch {index} of {kernel}: the fault-free profiling "
                                  f"run failed, no fault injected: {error}")
            return
        finally:
            emu.memory.restore(snapshot)
        golden = Golden(profile, group_sites(program), result.trace.read_bytes.ranges,
                        result.trace.written_bytes.ranges, result.steps)
        rng = np.random.default_rng([self.seed, index])
        fault = draw_fault(self.model, golden, program, rng, self.group)
        if fault is None:
            self._problems.append(f"launch {index} of {kernel}: no site for a "
                                  f"{self.model} fault, none injected")
            return
        before_launch(fault, emu)
        self.device.arm(fault_launch(fault))
        self._faults.append(InjectedFault(index, kernel, self.model, fault.describe()))

    # ------------------------------------------------------------------ results
    def outcome(self) -> RecoveryOutcome:
        """Synchronize what is pending and report the faults' fate."""
        report = self.session.synchronize()
        unrecovered = tuple(
            (self._kernels.get(d.launch) if d.launch is not None else None,
             f"{d.kind} at {d.at}" + (f": {d.detail}" if d.detail else "")
             + self._replay_detail(report, d))
            for d in report.unrecovered)
        recovered = sum(r.succeeded for r in report.replays)
        return RecoveryOutcome(tuple(self._faults), len(report.detections), recovered,
                               unrecovered, tuple(self._problems))

    @staticmethod
    def _replay_detail(report, detection) -> str:
        failed = [r for r in report.replays if not r.succeeded
                  and (detection.launch is None or detection.launch in r.launches
                       or not r.launches)]
        return f" (replay failed: {failed[-1].detail})" if failed and failed[-1].detail else ""

    def records(self):
        """The launches made through the session so far (their ``LaunchRecord``)."""
        return self.session.report().launches
