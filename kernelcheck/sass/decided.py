"""SASS kernels whose class one instruction decides, answered without the whole analysis.

A global atomic that is not idempotent in effect (``REDG.E.ADD``, ``ATOMG.E.CAS``,
``ATOMG.E.INC`` ...: the operations :data:`~kernelcheck.analysis.summary.NON_IDEMPOTENT_ATOMICS`
names) makes the kernel ``never`` idempotent whatever else it reads and writes: the analysis
(:func:`kernelcheck.analysis.summary.analyze_kernel`) gives ``never`` as soon as one such
atomic is reached, and more accesses cannot make an instance idempotent again. Such an
instruction is found by reading the opcodes, so a scan of a whole library, which reports
each kernel's class, can give these kernels their class in microseconds instead of lifting
and walking them (reduction kernels with a global semaphore and scatter-add kernels are
among the largest of a deep-learning library).

Only opcodes whose space is global by name count (``REDG``, ``ATOMG``, and the bulk
reductions of sm_90 into global memory: ``UBLKRED.G.S.ADD`` and ``UTMAREDG``, PTX's
``cp.reduce.async.bulk.global`` and its tensor form, which add a whole shared-memory block
into global memory): a generic ``ATOM`` or ``RED`` may address shared memory, which the
analysis must resolve. An instruction
guarded by ``@!PT`` never runs and does not count. Every other instruction does, reached
or not: a ``never`` for an atomic no path reaches is a class less precise than the
analysis would give, never a false ``idempotent``. Where the kernel also holds something
the analysis does not model, the analysis would say ``not_proven``; ``never`` is still
what every instance that runs the atomic is, and recovery treats both alike (it saves
everything the kernel may write).

What is not built: the accesses of the rest of the kernel, its conditions and its
:class:`~kernelcheck.launch.check.LaunchCheck` (which decides launches whose arguments skip
the atomic). The summary's LaunchCheck therefore says ``not proven``; a launch-time or
``--instance`` caller runs the whole analysis instead (:mod:`kernelcheck.corpus` uses this
module only for class reports).

>>> from kernelcheck.sass.loader import module_from_cubin
>>> m = module_from_cubin(open("fixtures/cubin/sm_90/atomics.cubin", "rb").read())
>>> [i.full_opcode for i in deciding_atomics(m.get_function("atomic_add_all"))]
['REDG.E.ADD.F32.FTZ.RN.STRONG.GPU']
>>> decided_summary(m.get_function("atomic_add_all")).kernel_class
'never'
"""

from __future__ import annotations

from kernelcheck.analysis.summary import (
    NON_IDEMPOTENT_ATOMICS,
    KernelSummary,
    MemoryAccess,
)
from kernelcheck.ir.nodes import Function, Instruction
from kernelcheck.launch.check import LaunchCheck
from kernelcheck.sass.analysis import sass_site
from kernelcheck.sass.lift_memory import atomic_operation

__all__ = ["deciding_atomics", "decided_summary"]

_GLOBAL_ATOMICS = frozenset({"REDG", "ATOMG"})
#: Bulk reductions into global memory (``UBLKRED.G.S``: global destination, shared source).
_BULK_REDUCTIONS = frozenset({"UBLKRED", "UTMAREDG"})


def _global_bulk_reduction(instr: Instruction) -> bool:
    return instr.opcode == "UTMAREDG" or (
        instr.opcode == "UBLKRED" and instr.modifiers[:1] == ("G",))


def deciding_atomics(function: Function) -> list[Instruction]:
    """The global atomics of ``function`` that are not idempotent in effect, in order."""
    found = []
    for instr in function.instructions:
        if type(instr) is not Instruction or not (
                instr.opcode in _GLOBAL_ATOMICS or _global_bulk_reduction(instr)):
            continue
        guard = instr.guard
        if guard is not None and guard.negated and guard.register in ("PT", "UPT"):
            continue
        if atomic_operation(instr) in NON_IDEMPOTENT_ATOMICS:
            found.append(instr)
    return found


def decided_summary(function: Function) -> KernelSummary | None:
    """A ``never`` summary of ``function`` naming its deciding atomics, or ``None`` when it
    has none (its class then needs the analysis)."""
    atomics = deciding_atomics(function)
    if not atomics:
        return None
    reasons = []
    accesses = []
    for instr in atomics:
        kind = "bulk reduction" if instr.opcode in _BULK_REDUCTIONS else "atomic"
        rule = f"{kind} {atomic_operation(instr)}: non-idempotent read-modify-write"
        opcode, site, line = sass_site(instr)
        reasons.append(f"{rule} of global memory at {opcode} {site}{line}")
        accesses.append(MemoryAccess("atomic", instr.full_opcode, instr.index,
                                     instr.loc.line if instr.loc else None, 0, "not computed",
                                     "", None, rule))
    note = (f"the class is decided by {len(atomics)} non-idempotent global atomic(s); the "
            f"rest of the kernel was not analysed, so no launch check was built")
    reasons.append(note)
    params = tuple((p.name, p.offset, p.size) for p in function.params)
    check = LaunchCheck(function.name, function.param_size, (), (), (), note)
    return KernelSummary(function.name, "never", tuple(reasons), tuple(accesses), check,
                         params=params)
