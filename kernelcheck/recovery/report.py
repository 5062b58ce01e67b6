"""What a recovery session reports: launches with their plans, detected faults and replays.

Beside the bytes saved before each launch, the report gives the launch's **floor**: the
bytes no recovery that re-executes the launch byte-exactly can do without saving, as the
CPU emulator's oracle measures them for this very launch
(:meth:`~kernelcheck.recovery.device.EmulatorDevice.launch_oracle`):

* the bytes the launch both reads and writes (any thread, in any order; a non-idempotent
  atomic reads its location): their value before the launch is lost once it has run, and a
  re-run reads them. Bytes it writes but never reads need no save (a re-run from the
  restored reads writes them again), nor do bytes it only reads;
* with window saves (the default), also the bytes it writes that an unverified earlier
  launch of the stream read since they were last written: replaying the window from that
  launch needs their older value.

The floor is known only where the emulator runs the launch with ``trace=True``; on a GPU
(or an untraced emulator, or for a launch that failed, and the rest of its window) it is
``None``, "unavailable". ``floor_missed_bytes`` counts floor bytes the plan did not save
(0 for a sound plan).
"""

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
    floor_bytes: int | None = None
    floor_missed_bytes: int | None = None

    @property
    def saved_over_floor(self) -> float | None:
        """Saved bytes over the floor (``None`` when the floor is unknown, or 0 while
        something was saved)."""
        return _ratio(self.saved_bytes, self.floor_bytes)

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
    def floor_bytes(self) -> int | None:
        """The launches' floors in total; ``None`` when any launch's floor is unknown."""
        if any(r.floor_bytes is None for r in self.launches):
            return None
        return sum(r.floor_bytes for r in self.launches)

    @property
    def floor_missed_bytes(self) -> int | None:
        """Floor bytes the plans did not save, in total (0 for sound plans)."""
        if any(r.floor_missed_bytes is None for r in self.launches):
            return None
        return sum(r.floor_missed_bytes for r in self.launches)

    @property
    def saved_over_floor(self) -> float | None:
        """Saved bytes over the floor, in total (``None`` when unknown or undefined)."""
        return _ratio(self.saved_bytes, self.floor_bytes)

    def summary(self) -> str:
        """One line: launches, saved bytes beside the floor, faults and replays."""
        floor = self.floor_bytes
        if floor is None:
            beside = "floor unavailable (no emulator oracle for every launch)"
        else:
            ratio = self.saved_over_floor
            beside = (f"floor {floor} bytes (emulator oracle), saved/floor "
                      f"{'-' if ratio is None else f'{ratio:.2f}x'}")
        done = sum(r.succeeded for r in self.replays)
        return (f"{len(self.launches)} launches, saved {self.saved_bytes} bytes; {beside}; "
                f"{len(self.detections)} faults detected, {done} replays succeeded, "
                f"{len(self.unrecovered)} unrecovered")

    @property
    def all_recovered(self) -> bool:
        """Whether every detected fault was recovered."""
        return not self.unrecovered

    def to_json(self) -> dict:
        return {
            "launches": [{"index": r.index, "kernel": r.kernel, "verdict": r.verdict,
                          "decided_by": r.decided_by, "plan": r.plan_mode,
                          "saved_bytes": r.saved_bytes,
                          "floor_bytes": r.floor_bytes,
                          "floor_missed_bytes": r.floor_missed_bytes,
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
            "saved_bytes": self.saved_bytes,
            "floor_bytes": self.floor_bytes,
            "saved_over_floor": self.saved_over_floor,
        }


def _ratio(saved: int, floor: int | None) -> float | None:
    if floor is None:
        return None
    if floor == 0:
        return 1.0 if saved == 0 else None
    return saved / floor
