"""One analysis for the kernels of a corpus that are the same code.

Before a library's images are handed to the workers, :func:`plan_sharing` gives every cubin
kernel its content key (:func:`kernelcheck.sass.identity.kernel_keys`). The first kernel
with a key is analysed where it is; every later one is left out of its image's task (an
image whose kernels are all left out gets no task: not even nvdisasm runs on it) and
becomes a *copy*: when the first kernel's record comes back, :meth:`SharingPlan.copies`
turns it into the copy's record by renaming (kernel, image, file), and the record's
``seconds`` is the time that took. Where the first kernel reads its image's constant bank 4
(``reads_module_bank`` of its record), only a copy in an image with the same bank 4 is
answered this way. A copy that is not answered (its first kernel never got a record
because its image failed or its worker died, or the banks differ) is analysed in its own
image after the others (:meth:`SharingPlan.unresolved`).

Only the SASS of cubins is shared; PTX is analysed kernel by kernel.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

__all__ = ["SharingPlan", "plan_sharing"]


@dataclass
class SharingPlan:
    """Which kernels each image's task leaves out, and whose analysis answers for them.

    ``skipped`` maps a job's index to the kernels its task leaves out; ``whole`` holds the
    jobs whose kernels are all left out (they get no task); ``copies_of`` maps an analysed
    kernel ``(job index, name)`` to the kernels that share its analysis.
    """

    skipped: dict[int, frozenset[str]] = field(default_factory=dict)
    whole: set[int] = field(default_factory=set)
    copies_of: dict[tuple[int, str], list[tuple[int, str]]] = field(default_factory=dict)
    #: Each cubin job's :func:`~kernelcheck.sass.identity.bank4_digest`.
    bank4: dict[int, str] = field(default_factory=dict)
    #: Copies answered so far.
    answered: int = 0
    #: Copies whose first kernel reads its image's bank 4 and whose own image's differs.
    declined: list[tuple[int, str]] = field(default_factory=list)

    def copies(self, index: int, record, jobs: Sequence, full_names: bool = False) -> list:
        """The records of the kernels that share the analysis of ``record`` (a
        :class:`~kernelcheck.corpus.KernelRecord` of job ``index``); each is given once."""
        if record.kernel is None:
            return []
        found = []
        for target, kernel in self.copies_of.pop((index, record.kernel), ()):
            if record.reads_module_bank and self.bank4.get(target) != self.bank4.get(index):
                self.declined.append((target, kernel))
                continue
            started = time.perf_counter()
            copy = renamed_record(record, jobs[target], kernel, full_names)
            found.append(replace(copy, seconds=time.perf_counter() - started))
        self.answered += len(found)
        return found

    def unresolved(self) -> dict[int, set[str]]:
        """``{job index: kernels}``: the copies whose first kernel got no record, or whose
        record does not answer for them (see :attr:`declined`)."""
        left: dict[int, set[str]] = {}
        for index, kernel in [*self.declined,
                              *(t for targets in self.copies_of.values() for t in targets)]:
            left.setdefault(index, set()).add(kernel)
        return left


def plan_sharing(jobs: Sequence, pattern: str | None = None, share: bool = True
                 ) -> SharingPlan:
    """The sharing plan of a corpus's images (:class:`~kernelcheck.corpus.ImageJob`), for
    the kernels that match ``pattern`` (a ``--kernel`` pattern) or all of them; with
    ``share`` false, nothing is shared and only the images with no kernel to analyse are
    left out.

    A kernel that another function of its image calls is always analysed in place (the
    caller needs its code), and an image that cannot be read shares nothing. An image with
    no kernel to analyse (all copies, or none matching ``pattern``) gets no task.
    """
    from kernelcheck.binary.cubin import CubinFile
    from kernelcheck.names import match_kernels
    from kernelcheck.sass.identity import bank4_digest, kernel_keys

    plan = SharingPlan()
    first: dict[str, tuple[int, str]] = {}
    for index, job in enumerate(jobs):
        if job.kind != "cubin":
            continue
        try:
            cubin = CubinFile(job.data)
            keys = kernel_keys(cubin) if share else {}
            plan.bank4[index] = bank4_digest(cubin) if share else ""
            called = {symbol for name in cubin.kernel_names()
                      for _, _, symbol, _ in cubin.relocations(f".text.{name}")}
        except Exception:  # noqa: BLE001 - the image's own task reports what is wrong
            continue
        names = list(cubin.kernel_names())
        if pattern:
            names = match_kernels(pattern, sorted(names))
        left_out = set()
        for name in names if share else ():
            key = keys.get(name)
            if key is None or name in called:
                continue
            original = first.setdefault(key, (index, name))
            if original != (index, name):
                left_out.add(name)
                plan.copies_of.setdefault(original, []).append((index, name))
        if left_out:
            plan.skipped[index] = frozenset(left_out)
        if len(left_out) == len(names):  # or no kernel matches the pattern
            plan.whole.add(index)
    return plan


def renamed_record(record, job, kernel: str, full_names: bool = False):
    """``record`` (a :class:`~kernelcheck.corpus.KernelRecord`) as the record of ``kernel``
    in ``job``: every string naming the original kernel, image or file names the copy's."""
    from kernelcheck.names import name_forms, short_name
    from kernelcheck.sass.identity import symbol_pattern

    # One pass over each string, so nothing put in is replaced again: the file and image
    # wherever they occur, the kernel's name as a whole symbol (symbol_pattern).
    new = {}
    patterns = []
    for old, replacement, pattern in ((record.file, job.file, re.escape(record.file)),
                                      (record.image, job.image, re.escape(record.image)),
                                      (record.kernel, kernel, symbol_pattern(record.kernel))):
        if old and old != replacement:
            new[old] = replacement
            patterns.append(pattern)
    expression = re.compile("|".join(f"(?:{p})" for p in patterns)) if patterns else None
    analysis = record.analysis
    if analysis is not None:
        demangled = name_forms(kernel)[0]
        analysis = {**_renamed(analysis, expression, new), "demangled": demangled,
                    "name": demangled if full_names else short_name(kernel)}
    return replace(record, file=job.file, image=job.image, arch=job.arch, kernel=kernel,
                   error=_renamed(record.error, expression, new), analysis=analysis)


def _renamed(value, expression: re.Pattern | None, new: dict[str, str]):
    if expression is None:
        return value
    if isinstance(value, str):
        return expression.sub(lambda match: new[match.group(0)], value)
    if isinstance(value, dict):
        return {key: _renamed(item, expression, new) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_renamed(item, expression, new) for item in value)
    return value
