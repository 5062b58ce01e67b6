"""What a recovery session reports: launches with their plans, detected faults and replays."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LaunchRecord", "Detection", "Replay", "RecoveryReport"]


@dataclass(frozen=True, slots=True)
class LaunchRecord:
    """One launch: its verdict, what was saved and the time spent around it (seconds)."""

    index: int
    kernel: str
    verdict: str
    decided_by: str
    plan_mode: str
    saved_bytes: int
    written_allocation_bytes: int | None
    seconds_launch: float
    seconds_plan: float
    seconds_save: float
    seconds_detect: float
    write_guarded: bool = False

    @property
    def seconds_overhead(self) -> float:
        """Planning, snapshot and detection time (everything but the launch itself)."""
        return self.seconds_plan + self.seconds_save + self.seconds_detect


@dataclass(frozen=True, slots=True)
class Detection:
    """A detected fault: ``kind`` (device_error, redundant, user_check), the launch it was
    pinned to (``None`` when any unverified launch may be faulty), and where (``launch`` or
    ``synchronize``)."""

    kind: str
    launch: int | None
    at: str
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Replay:
    """One recovery: the launches re-run (log indices), why, and whether it succeeded."""

    launches: tuple[int, ...]
    trigger: str
    succeeded: bool
    restored_bytes: int
    attempts: int
    detail: str = ""


@dataclass(frozen=True, slots=True)
class RecoveryReport:
    """Everything a session did (see :class:`~kernelcheck.recovery.session.RecoverySession`)."""

    launches: tuple[LaunchRecord, ...]
    detections: tuple[Detection, ...]
    replays: tuple[Replay, ...]
    unrecovered: tuple[Detection, ...]

    @property
    def saved_bytes(self) -> int:
        """Bytes saved before launches, in total."""
        return sum(r.saved_bytes for r in self.launches)

    @property
    def all_recovered(self) -> bool:
        """Whether every detected fault was recovered."""
        return not self.unrecovered

    def to_json(self) -> dict:
        return {
            "launches": [{"index": r.index, "kernel": r.kernel, "verdict": r.verdict,
                          "decided_by": r.decided_by, "plan": r.plan_mode,
                          "saved_bytes": r.saved_bytes,
                          "written_allocation_bytes": r.written_allocation_bytes,
                          "write_guarded": r.write_guarded,
                          "seconds_launch": r.seconds_launch,
                          "seconds_overhead": r.seconds_overhead} for r in self.launches],
            "detections": [{"kind": d.kind, "launch": d.launch, "at": d.at,
                            "detail": d.detail} for d in self.detections],
            "replays": [{"launches": list(r.launches), "trigger": r.trigger,
                         "succeeded": r.succeeded, "restored_bytes": r.restored_bytes,
                         "attempts": r.attempts, "detail": r.detail} for r in self.replays],
            "unrecovered": len(self.unrecovered),
        }
