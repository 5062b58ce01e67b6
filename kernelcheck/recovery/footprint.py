"""Byte footprints of a kernel instance from its LaunchCheck: read, written, clobbered bytes.

The recovery engine needs three byte sets per instance, all as supersets (sound) or unknown:

* ``writes``: every global byte the instance may write (what redundant execution compares,
  and what a replay window must account for);
* ``reads``: every global byte it may read (replay windows);
* ``indirect_writes``: the bytes of writing accesses whose address depends on loaded values
  (``indirect``: bounded only by their allocation), where a stray write caused by a corrupted
  index or loop bound may land inside ``writes`` yet outside what a correct run writes;
* ``clobbered``: every byte it may both read and write, *complete*: unlike the clobbered set
  of :func:`kernelcheck.launch.evaluate.evaluate`, which stops at the first non-idempotent
  atomic and which leaves out pairs whose byte set is unknown, the set here is ``None`` as
  soon as any access that matters has no known byte set.

With ``sharp`` (the default) every set is narrowed by the accesses' affine forms: an
access's bytes are cut to the image of its exact form
(:func:`~kernelcheck.launch.evaluate.affine_images`), and a clobbering pair contributes only
the bytes both forms can reach (:func:`~kernelcheck.launch.evaluate.sharp_clobbered`), not
the whole overlap of the two hulls (a pitched output interleaved with its input clobbers one
element per row, not every row; the holes between its rows are no longer in ``writes``).

Everything is computed through the public
:func:`~kernelcheck.launch.evaluate.evaluate_general` (the exact evaluator) on
derived checks (the LaunchCheck format is public): a check whose only pair is ``(k, k)`` and
whose affine forms are dropped (so no lattice test can call an access disjoint from itself)
yields the byte set of access ``k`` as its clobbered set.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from kernelcheck.analysis.intervals import IntervalSet
from kernelcheck.launch.check import ATOMIC_BAD, ATOMIC_OK, READ, WRITE, LaunchCheck
from kernelcheck.launch.evaluate import affine_images, evaluate_general, sharp_clobbered

__all__ = ["Footprint", "access_bytes", "instance_footprint", "allocations_touching",
           "clip_to_allocations",
           "written_allocations"]

_WRITES = (WRITE, ATOMIC_OK, ATOMIC_BAD)
_READS = (READ, ATOMIC_OK, ATOMIC_BAD)


@dataclass(frozen=True, slots=True)
class Footprint:
    """Byte sets of one instance; ``None`` means "not known" (never "empty")."""

    reads: IntervalSet | None
    writes: IntervalSet | None
    clobbered: IntervalSet | None
    reason: str = ""
    indirect_writes: IntervalSet | None = IntervalSet()


def _derived(check: LaunchCheck, accesses, pairs) -> LaunchCheck:
    # A new check (never dataclasses.replace: that would carry the original's compiled
    # verdict function along).
    return LaunchCheck(check.kernel, check.param_size, check.program, tuple(accesses),
                       tuple(pairs))


def _plain(check: LaunchCheck, pairs) -> LaunchCheck:
    accesses = (replace(a, kind=WRITE if a.kind != READ else READ, const_slot=-1, atoms=())
                for a in check.accesses)
    return _derived(check, accesses, pairs)


def access_bytes(check: LaunchCheck, index: int, params: bytes, grid, block,
                 allocations=None) -> IntervalSet | None:
    """Every byte access ``index`` of ``check`` may touch in this instance, or ``None``.

    Parameters
    ----------
    check : LaunchCheck
        The kernel's check (a ``not_proven`` check knows no access: ``None``).
    index : int
        Index into ``check.accesses``.
    params, grid, block, allocations
        The instance, as for :func:`~kernelcheck.launch.evaluate.evaluate`.

    Returns
    -------
    IntervalSet or None
        A superset of the bytes touched (empty when the access cannot run), ``None`` when no
        byte set is known.
    """
    if check.not_proven:
        return None
    v = evaluate_general(_plain(check, ((index, index),)), params, grid, block, allocations)
    if v.verdict == "not_idempotent":
        return v.clobbered
    if v.verdict == "idempotent":
        return IntervalSet()
    return None


def _union(sets) -> IntervalSet | None:
    out = IntervalSet()
    for s in sets:
        if s is None:
            return None
        out = out | s
    return out


def instance_footprint(check: LaunchCheck, params: bytes, grid, block,
                       allocations=None, sharp: bool = True) -> Footprint:
    """Read, written and clobbered bytes of one instance (see the module documentation).

    Examples
    --------
    >>> from kernelcheck.launch.check import LaunchCheck
    >>> instance_footprint(LaunchCheck("k", 0, (), (), ()), b"", (1, 1, 1), (1, 1, 1)).writes
    IntervalSet([])
    """
    if check.not_proven:
        return Footprint(None, None, None, check.not_proven, None)
    sets = [access_bytes(check, k, params, grid, block, allocations)
            for k in range(len(check.accesses))]
    if sharp:
        images = affine_images(check, params, grid, block)
        sets = [s if s is None or img is None else s & img
                for s, img in zip(sets, images, strict=True)]
    reads = _union(s for s, a in zip(sets, check.accesses, strict=True) if a.kind in _READS)
    writes = _union(s for s, a in zip(sets, check.accesses, strict=True) if a.kind in _WRITES)
    indirect = _union(s for s, a in zip(sets, check.accesses, strict=True)
                      if a.kind in _WRITES and a.indirect)
    involved = {k for pair in check.pairs for k in pair}
    involved |= {k for k, a in enumerate(check.accesses) if a.kind == ATOMIC_BAD}
    if any(sets[k] is None for k in involved):
        return Footprint(reads, writes, None, "an access that may clobber has no known bytes",
                         indirect)
    bad = tuple(k for k, a in enumerate(check.accesses) if a.kind == ATOMIC_BAD)
    accesses = tuple(replace(a, kind=ATOMIC_OK) if a.kind == ATOMIC_BAD else a
                     for a in check.accesses)
    derived = _derived(check, accesses, check.pairs + tuple((k, k) for k in bad))
    v = evaluate_general(derived, params, grid, block, allocations)
    if v.verdict == "not_idempotent" and v.clobbered is not None:
        clobbered = v.clobbered
        if sharp:
            narrow = sharp_clobbered(derived, params, grid, block, allocations)
            if narrow is not None:
                clobbered = clobbered & narrow
    elif v.verdict == "idempotent":
        clobbered = IntervalSet()
    else:
        return Footprint(reads, writes, None, v.detail or "clobbered bytes not known",
                         indirect)
    return Footprint(reads, writes, clobbered, "", indirect)


def clip_to_allocations(ranges: IntervalSet, allocations) -> tuple[tuple[int, int], ...]:
    """``ranges`` cut to the allocations, one piece per allocation (copies never span two).

    Bytes outside every allocation are dropped: no launch can write them without a memory
    fault.
    """
    out = []
    for base, size in sorted((int(b), int(s)) for b, s in allocations):
        out += (ranges & IntervalSet(((base, base + size),))).ranges
    return tuple(out)


def allocations_touching(ranges: IntervalSet, allocations) -> tuple[tuple[int, int], ...]:
    """The ``(base, size)`` allocations that share a byte with ``ranges``."""
    out = []
    for base, size in allocations:
        if ranges & IntervalSet(((base, base + size),)):
            out.append((int(base), int(size)))
    return tuple(out)


def written_allocations(check: LaunchCheck, params: bytes, allocations,
                        footprint: Footprint | None = None) -> tuple[tuple[int, int], ...] | None:
    """The allocations the instance may write, or ``None`` when that is not known.

    From the written bytes when they are known, else from each writing access's base pointer
    parameter (the allocation that parameter points into; accesses are assumed to stay in the
    allocation of their base pointer, as the launch shim's allocation table assumes). ``None``
    when some writing access has no base parameter or its pointer is in no allocation, or
    when its base is tied to it only under a launch-time condition (``rebase_slot``: other
    pointer-wide parameters in its offset must keep the base in its allocation), which its
    unknown bytes may have failed.
    """
    if footprint is not None and footprint.writes is not None:
        return allocations_touching(footprint.writes, allocations)
    if check.not_proven:
        return None
    out: dict[int, int] = {}
    for a in check.accesses:
        if a.kind not in _WRITES:
            continue
        if a.base_offset < 0 or a.base_offset + a.base_size > len(params) or \
                a.rebase_slot >= 0:
            return None
        ptr = int.from_bytes(params[a.base_offset:a.base_offset + a.base_size], "little")
        hit = [(b, s) for b, s in allocations if b <= ptr < b + s]
        if not hit:
            return None
        out[int(hit[0][0])] = int(hit[0][1])
    return tuple(sorted(out.items()))
