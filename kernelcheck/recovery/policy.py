"""What to save before a launch: the recovery policy, a pure function of the verdict.

:func:`plan_launch` decides from the instance verdict, its byte footprint, the allocation
table and the configuration, and touches no device, so the launch shim and the Python
session share it:

* ``idempotent``: save nothing; the instance can be re-run from whatever state it left;
* ``not_idempotent`` with a known clobbered set: save exactly those bytes (the instance then
  re-runs from its own start once they are restored);
* ``not_proven`` (or ``not_idempotent`` without a complete clobbered set): save every
  allocation the instance may write (all allocations when even that is unknown), or mark
  the instance unrecoverable, as configured.

With ``window_saves`` the plan also saves the bytes this launch may write that earlier,
not yet verified launches of the stream read (``pending_reads``), so that any suffix of the
launch log stays re-executable (:mod:`kernelcheck.recovery.window`).
"""

from __future__ import annotations

from dataclasses import dataclass

from kernelcheck.analysis.intervals import IntervalSet
from kernelcheck.recovery.footprint import Footprint, clip_to_allocations

__all__ = ["RecoveryConfig", "SavePlan", "plan_launch", "NOTHING", "CLOBBERED",
           "WRITTEN_ALLOCATIONS", "ALL_ALLOCATIONS", "UNRECOVERABLE"]

_NO_BYTES = IntervalSet()
NOTHING, CLOBBERED, WRITTEN_ALLOCATIONS, ALL_ALLOCATIONS, UNRECOVERABLE = (
    "nothing", "clobbered", "written_allocations", "all_allocations", "unrecoverable")


@dataclass(frozen=True, slots=True)
class RecoveryConfig:
    """Settings of the recovery engine.

    Attributes
    ----------
    not_proven : str
        ``"save_written"`` (save the allocations the instance may write) or
        ``"unrecoverable"`` (save nothing; a fault in such an instance is reported, not
        replayed).
    redundant : str
        Redundant execution: ``"off"``, ``"idempotent"`` (re-run idempotent instances and
        compare their written bytes) or ``"replayable"`` (also instances made replayable by
        their saved bytes).
    window_saves : bool
        Save bytes that unverified earlier launches read (see the module documentation).
    max_replays : int
        Replay attempts per detected fault before giving up.
    write_guard : bool
        Write-address checking: on a device that offers ``set_write_guard``, stores and
        atomics outside the instance's predicted write footprint are stopped and reported as
        a detected fault. Off for a launch whose written bytes are not known.
    indirect_write_saves : bool
        Also save the bytes that indirect writes (addresses from loaded values, bounded only
        by their allocation) may touch, so that a stray write of a faulty run that stays
        inside the write footprint (a corrupted scatter index or loop bound) is undone by the
        replay. Off by default: it saves whole output allocations of scatter kernels.
    affine_footprint : bool
        Narrow each launch's byte sets by the affine forms of its accesses
        (:func:`~kernelcheck.launch.evaluate.affine_images`): the written bytes (so the write
        guard also stops stores into the holes of a strided output), the read bytes, and the
        clobbered bytes (:func:`~kernelcheck.launch.evaluate.sharp_clobbered`), each still a
        superset of what the launch touches. Off: the accesses' byte hulls, and for the
        clobbered bytes their overlap, as the launch-time verdict reports it.
    """

    not_proven: str = "save_written"
    redundant: str = "idempotent"
    window_saves: bool = True
    max_replays: int = 3
    write_guard: bool = True
    indirect_write_saves: bool = False
    affine_footprint: bool = True

    def __post_init__(self) -> None:
        if self.not_proven not in ("save_written", "unrecoverable"):
            raise ValueError(f"not_proven must be 'save_written' or 'unrecoverable', "
                             f"got {self.not_proven!r}")
        if self.redundant not in ("off", "idempotent", "replayable"):
            raise ValueError(f"redundant must be 'off', 'idempotent' or 'replayable', "
                             f"got {self.redundant!r}")


@dataclass(frozen=True, slots=True)
class SavePlan:
    """The bytes to save before a launch and why: ``ranges`` are half-open, sorted, and
    each lies inside one allocation."""

    mode: str
    ranges: tuple[tuple[int, int], ...]
    reason: str

    @property
    def nbytes(self) -> int:
        """Bytes saved."""
        return sum(b - a for a, b in self.ranges)

    @property
    def replayable(self) -> bool:
        """Whether restoring ``ranges`` makes the instance re-executable from its start."""
        return self.mode != UNRECOVERABLE


def _alloc_set(allocations) -> IntervalSet:
    return IntervalSet((int(b), int(b) + int(s)) for b, s in allocations)


def plan_launch(verdict: str, footprint: Footprint, allocations,
                written: tuple[tuple[int, int], ...] | None,
                config: RecoveryConfig = RecoveryConfig(),
                pending_reads: IntervalSet | None = _NO_BYTES) -> SavePlan:
    """Decide what to save before one launch.

    Parameters
    ----------
    verdict : str
        ``"idempotent"``, ``"not_idempotent"`` or ``"not_proven"`` (anything else counts as
        not proven).
    footprint : Footprint
        The instance's byte sets (:func:`~kernelcheck.recovery.footprint.instance_footprint`).
    allocations : sequence of (base, size)
        Live device allocations.
    written : tuple of (base, size) or None
        The allocations the instance may write (``None``: unknown, so every allocation).
    config : RecoveryConfig
        Policy settings.
    pending_reads : IntervalSet or None, optional
        Bytes read by earlier unverified launches (none by default; ``None``: unknown,
        every allocation). Only used with ``config.window_saves``.

    Returns
    -------
    SavePlan

    Examples
    --------
    >>> from kernelcheck.analysis.intervals import IntervalSet
    >>> fp = Footprint(IntervalSet([(0, 8)]), IntervalSet([(0, 8)]), IntervalSet([(0, 8)]))
    >>> plan_launch("not_idempotent", fp, [(0, 64)], ((0, 64),)).ranges
    ((0, 8),)
    """
    every = _alloc_set(allocations)
    writes = footprint.writes
    if writes is None:
        writes = _alloc_set(written) if written is not None else every
    extra = IntervalSet()
    if config.window_saves:
        extra = writes & (every if pending_reads is None else pending_reads)
    stray = IntervalSet()
    if config.indirect_write_saves and verdict in ("idempotent", "not_idempotent"):
        stray = footprint.indirect_writes if footprint.indirect_writes is not None else writes
        extra = extra | stray
    if verdict == "idempotent":
        mode, base, reason = NOTHING, IntervalSet(), "idempotent: re-runs from any state"
    elif verdict == "not_idempotent" and footprint.clobbered is not None:
        mode, base = CLOBBERED, footprint.clobbered
        reason = "not idempotent: its clobbered bytes are saved"
    elif config.not_proven == "unrecoverable":
        return SavePlan(UNRECOVERABLE, (), f"{verdict}: configured not to save")
    elif written is not None:
        mode, base = WRITTEN_ALLOCATIONS, _alloc_set(written)
        reason = f"{verdict}: the allocations it may write are saved"
    else:
        mode, base = ALL_ALLOCATIONS, every
        reason = f"{verdict}: written allocations unknown, every allocation is saved"
    ranges = base | extra
    if stray - base:
        reason += "; with the bytes indirect writes may touch"
    if (extra - stray) - base:
        reason += "; with bytes earlier unverified launches read"
    return SavePlan(mode, clip_to_allocations(ranges, allocations), reason)
