"""Analyse every kernel of a large binary (a whole library) over an executor.

The unit of work is one device image: nvdisasm, the slow part, runs once per cubin image
and every kernel of it is then parsed (and, at the ``structure`` stage, given its
structural report) in the same worker process. Results stream back per image and are
handed to the caller one :class:`KernelRecord` per kernel as soon as their image is done
(``kernelcheck analyze --jsonl`` writes them as JSON lines). Nothing one image does can
stop the run: a corrupt image, nvdisasm failing, a function that does not parse, an
analysis fault, even a worker dying, become failed records with their cause, and
:class:`CorpusSummary` counts them by cause at the end.

Each image is one keyed task of :mod:`kernelcheck.executor`: the local process pool by
default, or a Dask cluster. A task whose worker dies is run again (alone, on the local pool);
only an image whose workers keep dying becomes a ``WorkerDied`` failure. Results come back
once per image whatever happens to the workers.

Which images are analysed follows :func:`kernelcheck.inputs.load_input`: the SASS of every
cubin for the requested architecture, and PTX only for architectures no cubin matches
(or as ``prefer`` says).
"""

from __future__ import annotations

import math
import os
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from kernelcheck.executor import LocalExecutor, Task

__all__ = ["KernelRecord", "CorpusSummary", "ImageJob", "plan_jobs", "analyse_image",
           "corpus_tasks", "run_corpus"]

#: Version of the JSON line format of :meth:`KernelRecord.to_json`.
JSONL_FORMAT_VERSION = 2


@dataclass(frozen=True, slots=True)
class KernelRecord:
    """The outcome for one kernel (or for a whole image that failed before its kernels).

    ``status`` is ``"ok"`` or ``"failed"``; a failure has ``cause`` (the error class, e.g.
    ``SassSyntaxError``, ``NvdisasmError``) and ``error`` (its message). ``kernel`` is
    ``None`` for an image-level failure.
    """

    file: str
    image: str
    arch: str | None
    language: str
    kernel: str | None
    status: str
    cause: str | None = None
    error: str | None = None
    instructions: int = 0
    blocks: int = 0
    loops: int | None = None
    params: tuple[tuple[str, int, int], ...] = ()
    accesses: tuple[tuple[str, str, int], ...] = ()
    unknown_opcodes: tuple[str, ...] = ()
    analysis: dict | None = None
    #: Seconds the idempotency analysis of this kernel took (stage ``analysis``); kept out
    #: of :meth:`to_json`, whose lines are the same from run to run.
    seconds: float | None = None
    #: Whether the kernel's SASS, or a subroutine of its image, reads a constant bank the
    #: image fills in (:func:`kernelcheck.sass.identity.reads_module_bank`): its record then
    #: answers only for a kernel with the same code in an image with the same bank 4
    #: (:mod:`kernelcheck.sharing`). Kept out of :meth:`to_json`.
    reads_module_bank: bool = False
    #: Whether the class came from a global atomic alone, without the analysis
    #: (:mod:`kernelcheck.sass.decided`). Kept out of :meth:`to_json` (the reasons say so).
    decided_early: bool = False

    def to_json(self) -> dict:
        """One JSON line's object (format :data:`JSONL_FORMAT_VERSION`)."""
        from kernelcheck.binary.demangle import demangle

        item = {
            "format_version": JSONL_FORMAT_VERSION,
            "file": self.file,
            "image": self.image,
            "arch": self.arch,
            "language": self.language,
            "kernel": self.kernel,
            "demangled": demangle(self.kernel) if self.kernel else None,
            "status": self.status,
        }
        if self.analysis is not None:
            item.update({k: v for k, v in self.analysis.items()
                         if k not in ("format_version", "file", "image", "arch", "language",
                                      "kernel", "demangled")})
        if self.status != "ok":
            item["cause"] = self.cause
            item["error"] = self.error
            return item
        item.update({
            "instructions": self.instructions,
            "blocks": self.blocks,
            "loops": self.loops,
            "params": [{"name": n, "offset": o, "size": s} for n, o, s in self.params],
            "accesses": [{"space": sp, "kind": k, "count": c}
                         for sp, k, c in self.accesses],
            "unknown_opcodes": list(self.unknown_opcodes),
        })
        return item


@dataclass(frozen=True, slots=True)
class ImageJob:
    """One image to analyse: its bytes, kind (``cubin``/``ptx``) and where it was found."""

    file: str
    image: str
    arch: str | None
    kind: str
    data: bytes


@dataclass
class CorpusSummary:
    """Totals of a run: images, kernels ok and failed, failures by cause, time split."""

    images: int = 0
    images_failed: int = 0
    kernels: int = 0
    kernels_failed: int = 0
    causes: Counter = field(default_factory=Counter)
    seconds: float = 0.0
    nvdisasm_seconds: float = 0.0
    parse_seconds: float = 0.0
    analysis_seconds: float = 0.0
    input_errors: tuple[str, ...] = ()
    #: The analysis time of each analysed kernel, in the order the records came.
    kernel_seconds: list[float] = field(default_factory=list)
    #: Kernels answered by the record of a kernel with the same code (their time is the
    #: renaming's; see :mod:`kernelcheck.sharing`).
    kernels_shared: int = 0
    #: Kernels whose class a global atomic decided without the analysis
    #: (:mod:`kernelcheck.sass.decided`).
    kernels_decided_early: int = 0

    def add(self, record: KernelRecord) -> None:
        if record.kernel is None:
            self.images_failed += 1
        else:
            self.kernels += 1
        self.kernels_decided_early += record.decided_early
        if record.seconds is not None:
            self.kernel_seconds.append(record.seconds)
        if record.status != "ok":
            if record.kernel is not None:
                self.kernels_failed += 1
            self.causes[record.cause or "unknown"] += 1

    def kernel_time_quantiles(self) -> tuple[float, float, float] | None:
        """Median, 90th percentile and maximum of the per-kernel analysis time (nearest
        rank), or ``None`` when no kernel was analysed.

        >>> s = CorpusSummary(kernel_seconds=[0.3, 0.1, 0.2, 1.5])
        >>> s.kernel_time_quantiles()
        (0.2, 1.5, 1.5)
        """
        if not self.kernel_seconds:
            return None
        ordered = sorted(self.kernel_seconds)

        def rank(q: float) -> float:
            return ordered[max(0, math.ceil(q * len(ordered)) - 1)]

        return rank(0.5), rank(0.9), ordered[-1]


def plan_jobs(path: str, arch: str | None = None, prefer: str = "sass",
              data: bytes | None = None) -> tuple[list[ImageJob], tuple[str, ...]]:
    """The images of ``path`` (or of ``data``, named ``path``) to analyse, and the errors
    met while listing them."""
    from kernelcheck.binary.image import open_binary
    from kernelcheck.inputs import _arch_key, _arch_matches, _read

    data = _read(path) if data is None else data
    image = open_binary(data, filename=path)
    wanted = [e for e in image.images if e.kind in ("ptx", "cubin")
              and _arch_matches(e.arch, arch)]
    cubins = {_arch_key(e.arch) for e in wanted if e.kind == "cubin"}
    ptxs = {_arch_key(e.arch) for e in wanted if e.kind == "ptx"}
    jobs = []
    for embedded in wanted:
        key = _arch_key(embedded.arch)
        if embedded.kind == "ptx" and key in cubins and prefer == "sass":
            continue
        if embedded.kind == "cubin" and key in ptxs and prefer == "ptx":
            continue
        jobs.append(ImageJob(path, embedded.origin.describe(), embedded.arch,
                             embedded.kind, embedded.data))
    return jobs, tuple(str(e) for e in image.errors)


def _structure_fields(function, sass: bool) -> dict:
    from kernelcheck.ir.loops import natural_loops
    from kernelcheck.ir.operands import access_kind, memory_space

    if sass:  # indirect branches take their targets from the image
        from kernelcheck.sass.cfg import control_flow_graph
    else:
        from kernelcheck.ir.cfg import control_flow_graph
    loops = len(natural_loops(control_flow_graph(function)))
    counts: Counter = Counter()
    for instr in function.instructions:
        kind = access_kind(instr)
        if kind is not None:
            counts[(memory_space(instr), kind)] += 1
    return {"loops": loops,
            "accesses": tuple((s, k, c) for (s, k), c in sorted(counts.items()))}


def _idempotency(job: ImageJob, module, function, options: dict) -> tuple[dict, bool]:
    """The analysis record of one kernel (stage ``analysis``), and whether a global atomic
    decided it without the analysis; the summary and instance verdict are stopped past
    ``options["kernel_timeout"]`` seconds (not proven)."""
    from kernelcheck.analysis.budget import BudgetExceeded, budget_reason, within_budget
    from kernelcheck.errors import UnsupportedFeature
    from kernelcheck.output.records import failure_record, kernel_record

    language = "sass" if job.kind == "cubin" else "ptx"

    def analyse():
        if language == "sass":
            from kernelcheck.sass.analysis import analyze_sass_kernel

            summary = analyze_sass_kernel(module, function)
        else:
            from kernelcheck.analysis.summary import analyze_kernel

            summary = analyze_kernel(module, function)
        return summary, _instance_verdict(summary, function, options)

    timeout = options.get("kernel_timeout")
    try:
        # A class report (no instance to decide) of a kernel whose class one global
        # atomic decides needs nothing more (kernelcheck.sass.decided).
        early = None
        if language == "sass" and options.get("early_verdicts") and options.get(
                "instance") is None:
            from kernelcheck.sass.decided import decided_summary

            early = decided_summary(function)
        try:
            if early is not None:
                summary, verdict = early, None
            else:
                summary, verdict = within_budget(analyse, timeout)
        except (BudgetExceeded, UnsupportedFeature) as stop:
            # Past the budget, or a construct the analysis does not model (a BRX with no
            # listed target in a subroutine): not proven, saying why; not a failure.
            from kernelcheck.analysis.summary import unanalysed_summary

            reason = budget_reason(timeout) if isinstance(stop, BudgetExceeded) else str(stop)
            summary = unanalysed_summary(function, reason)
            verdict = _instance_verdict(summary, function, options)
        return kernel_record(file=job.file, image=job.image, arch=job.arch,
                             language=language, module=module, function=function,
                             summary=summary, verdict=verdict,
                             full_names=options.get("full_names", False)), early is not None
    except Exception as error:  # noqa: BLE001 - reported per kernel, with its cause
        return failure_record(file=job.file, image=job.image, arch=job.arch,
                              language=language, kernel=function.name,
                              cause=type(error).__name__, error=str(error)), False


def _instance_verdict(summary, function, options: dict):
    """The verdict of ``options["instance"]`` for the kernel, or ``None`` without one."""
    if options.get("instance") is None:
        return None
    from kernelcheck.launch.evaluate import evaluate
    from kernelcheck.launch.params import param_buffer

    values, grid, block, allocations = options["instance"]
    return evaluate(summary.launch_check, param_buffer(function, values), grid, block,
                    allocations)


def analyse_image(job: ImageJob, stage: str = "structure", options: dict | None = None
                  ) -> tuple[list[KernelRecord], dict]:
    """Analyse one image in the calling process; never raises for a property of the input.

    ``stage`` is ``ir`` (parse only), ``structure`` (and count loops and accesses) or
    ``analysis`` (and run the idempotency analysis: each record's ``analysis`` holds its
    :func:`~kernelcheck.output.records.kernel_record`). ``options`` of the analysis stage:
    ``kernel`` (a ``--kernel`` pattern), ``instance``, ``full_names``, ``kernel_timeout``
    (seconds one kernel's analysis may take, :mod:`kernelcheck.analysis.budget`) and
    ``early_verdicts`` (without ``instance``, a SASS kernel whose class a global atomic
    decides gets it without the analysis: :mod:`kernelcheck.sass.decided`). Any stage:
    ``skip``, kernels to leave out (they get no record; see :mod:`kernelcheck.sharing`).

    Returns the records (one per kernel, or one image-level failure) and the seconds spent
    in ``nvdisasm``, ``parse`` and ``analysis``.
    """
    options = options or {}
    skip = options.get("skip") or frozenset()
    from kernelcheck.errors import KernelcheckError

    timing = {"nvdisasm": 0.0, "parse": 0.0, "analysis": 0.0}
    base = {"file": job.file, "image": job.image, "arch": job.arch,
            "language": "sass" if job.kind == "cubin" else "ptx"}

    def image_failure(error: BaseException) -> list[KernelRecord]:
        return [KernelRecord(**base, kernel=None, status="failed",
                             cause=type(error).__name__, error=str(error))]

    label = f"{job.file}:{job.image}"
    try:
        if job.kind == "cubin":
            from kernelcheck.binary.cubin import CubinFile
            from kernelcheck.binary.nvdisasm import disassemble
            from kernelcheck.ir.nodes import Module
            from kernelcheck.sass.loader import functions_of_cubin, has_line_info, source_files

            start = time.perf_counter()
            cubin = CubinFile(job.data, filename=label)
            code = disassemble(job.data, label=label,
                               line_info=stage == "analysis" and has_line_info(cubin))
            timing["nvdisasm"] = time.perf_counter() - start
            start = time.perf_counter()
            functions, failures = functions_of_cubin(cubin, code, filename=label,
                                                     skip=skip)
            kernel_names = {k.name for k in cubin.iter_kernels()}
            module = Module(None, (cubin.arch,), 64, source_files(code) + functions, label)
            subroutines = [f for f in functions if not f.is_kernel]
            timing["parse"] = time.perf_counter() - start
        else:
            from kernelcheck.ptx.parser import parse_ptx

            start = time.perf_counter()
            module = parse_ptx(job.data, filename=label)
            timing["parse"] = time.perf_counter() - start
            functions, failures = module.functions, ()
            kernel_names = {f.name for f in module.kernels}
            subroutines = []
    except KernelcheckError as error:
        return image_failure(error), timing
    except Exception as error:  # a fault of ours: still only this image fails
        return image_failure(error), timing
    chosen = None
    if options.get("kernel"):
        from kernelcheck.names import match_kernels

        chosen = set(match_kernels(options["kernel"], sorted(kernel_names)))
    records = [KernelRecord(**base, kernel=f.name, status="failed", cause=f.cause,
                            error=str(f.error))
               for f in failures if f.name in kernel_names and f.name not in skip
               and (chosen is None or f.name in chosen)]
    start = time.perf_counter()
    for function in functions:
        if not function.is_kernel or function.body is None:
            continue
        if (chosen is not None and function.name not in chosen) or function.name in skip:
            continue
        fields = {"instructions": len(function.instructions),
                  "blocks": len(function.blocks),
                  "params": tuple((p.name, p.offset, p.size) for p in function.params),
                  "unknown_opcodes": tuple(sorted({i.opcode for i in function.instructions
                                                   if not i.known}))}
        try:
            if stage in ("structure", "analysis"):
                fields.update(_structure_fields(function, job.kind == "cubin"))
        except Exception as error:  # noqa: BLE001 - reported per kernel, with its cause
            records.append(KernelRecord(**base, kernel=function.name, status="failed",
                                        cause=type(error).__name__, error=str(error)))
            continue
        if stage == "analysis":
            started = time.perf_counter()
            fields["analysis"], fields["decided_early"] = _idempotency(job, module, function,
                                                                       options)
            fields["seconds"] = time.perf_counter() - started
        if job.kind == "cubin":
            from kernelcheck.sass.identity import reads_module_bank

            fields["reads_module_bank"] = reads_module_bank([function, *subroutines])
        records.append(KernelRecord(**base, kernel=function.name, status="ok", **fields))
    timing["analysis"] = time.perf_counter() - start
    return records, timing


def corpus_tasks(planned: Sequence[ImageJob], stage: str = "structure",
                 options: dict | None = None, skipped: dict | None = None,
                 suffix: str = "") -> Iterator[Task]:
    """One keyed task per image (key: position, file name and image location, then
    ``suffix``); ``skipped`` maps an image's position to the kernels its task leaves out."""
    skipped = skipped or {}
    for index, job in enumerate(planned):
        chosen = options
        if skipped.get(index):
            chosen = {**(options or {}), "skip": skipped[index]}
        yield Task(f"image-{index}-{os.path.basename(job.file)}:{job.image}{suffix}",
                   analyse_image, (job, stage, chosen))


def run_corpus(
    path: str | Sequence[str],
    *,
    arch: str | None = None,
    jobs: int | None = None,
    stage: str = "structure",
    prefer: str = "sass",
    on_record: Callable[[KernelRecord], None] | None = None,
    progress: bool | None = None,
    limit: int | None = None,
    executor=None,
    options: dict | None = None,
    share: bool = True,
) -> CorpusSummary:
    """Analyse every kernel of ``path`` over ``jobs`` worker processes, or ``executor``.

    Parameters
    ----------
    path : str, InputFile or a sequence of them
        A cubin, fatbin, executable or shared library (or several: their images are
        analysed as one corpus).
    arch : str, optional
        Only images for this architecture (``sm_90``).
    jobs : int, optional
        Worker processes of the local pool; default all cores. ``1`` runs in this process.
    stage : {"ir", "structure", "analysis"}
        Stop after parsing into IR, or also build CFG, loops and access counts, or also
        run the idempotency analysis (see :func:`analyse_image`, with ``options``).
    prefer : {"sass", "ptx", "both"}
        As for :func:`kernelcheck.inputs.load_input`.
    on_record : callable, optional
        Called with each :class:`KernelRecord` as soon as its image is done.
    progress : bool, optional
        Show progress on stderr; default: when stderr is a terminal.
    limit : int, optional
        Analyse only the first ``limit`` images (for sampling).
    executor : LocalExecutor or DaskExecutor, optional
        Where images are analysed (:mod:`kernelcheck.executor`); ``jobs`` is then ignored.
        The caller keeps it open or closes it.
    share : bool
        Analyse a cubin kernel whose code is the same as an earlier kernel's only once, and
        give the others that record, renamed (:mod:`kernelcheck.sharing`; default).

    Returns
    -------
    CorpusSummary
    """
    from kernelcheck.output.progress import ProgressBar

    started = time.perf_counter()
    planned: list[ImageJob] = []
    errors: list[str] = []
    from kernelcheck.inputs import InputFile

    for item in [path] if isinstance(path, (str, os.PathLike, InputFile)) else path:
        if isinstance(item, InputFile):
            more, problems = plan_jobs(item.path, arch, prefer, data=item.data)
        else:
            more, problems = plan_jobs(os.fspath(item), arch, prefer)
        planned.extend(more)
        errors.extend(problems)
    if limit is not None:
        planned = planned[:limit]
    summary = CorpusSummary(images=len(planned), input_errors=tuple(errors))
    from kernelcheck.sharing import SharingPlan, plan_sharing

    pattern = (options or {}).get("kernel")
    sharing = plan_sharing(planned, pattern, share) if share or pattern else SharingPlan()
    full_names = bool((options or {}).get("full_names"))
    # The bar counts bytes of device code, not images: a library's images range from one
    # kernel to hundreds, and their size follows the work far better than their number
    # (libtorch's first 30% of images hold under a tenth of its kernels).
    meter = ProgressBar(sum(len(job.data) for index, job in enumerate(planned)
                            if index not in sharing.whole), "B", progress, scaled=True)
    finished = [len(sharing.whole)]

    def emit(record: KernelRecord) -> None:
        summary.add(record)
        if on_record is not None:
            on_record(record)

    def consume(index: int, records: list[KernelRecord], timing: dict, size: int) -> None:
        summary.nvdisasm_seconds += timing["nvdisasm"]
        summary.parse_seconds += timing["parse"]
        summary.analysis_seconds += timing["analysis"]
        for record in records:
            emit(record)
            for copy in sharing.copies(index, record, planned, full_names):
                emit(copy)
        finished[0] += 1
        meter.step(f"{finished[0]}/{summary.images} images, {summary.kernels} kernels, "
                   f"{summary.kernels_failed} failed", count=size)

    own = executor is None
    executor = executor or LocalExecutor(jobs)
    try:
        tasks = [(task, index) for index, task in
                 enumerate(corpus_tasks(planned, stage, options, sharing.skipped))
                 if index not in sharing.whole]
        by_key = {task.key: index for task, index in tasks}
        for result in executor.run([task for task, _ in tasks]):
            index = by_key[result.key]
            size = len(planned[index].data)
            if result.ok:
                consume(index, *result.value, size)
            else:
                consume(index, *_dead_worker(planned[index], result.lost), size)
        _analyse_unresolved(planned, stage, options, sharing, executor, emit, summary)
    finally:
        meter.finish()
        if own:
            executor.close()
    summary.kernels_shared = sharing.answered
    summary.seconds = time.perf_counter() - started
    return summary


def _analyse_unresolved(planned: Sequence[ImageJob], stage: str, options: dict | None,
                        sharing, executor, emit: Callable[[KernelRecord], None],
                        summary: CorpusSummary) -> None:
    """Analyse in their own images the copies whose first kernel got no record; an image
    that fails now gives each of those kernels a failed record with the image's cause."""
    left = sharing.unresolved()
    if not left:
        return
    from kernelcheck.binary.cubin import CubinFile

    skipped = {}
    for index, kernels in left.items():
        names = CubinFile(planned[index].data).kernel_names()
        skipped[index] = frozenset(n for n in names if n not in kernels)
    by_key = {task.key: (index, task) for index, task in
              enumerate(corpus_tasks(planned, stage, options, skipped, suffix="-alone"))
              if index in left}
    for result in executor.run([task for _, task in by_key.values()]):
        index = by_key[result.key][0]
        job = planned[index]
        records, timing = result.value if result.ok else _dead_worker(job, result.lost)
        summary.nvdisasm_seconds += timing["nvdisasm"]
        summary.parse_seconds += timing["parse"]
        summary.analysis_seconds += timing["analysis"]
        for record in records:
            if record.kernel is not None:
                emit(record)
                continue
            for kernel in sorted(left[index]):
                emit(KernelRecord(job.file, job.image, job.arch, record.language, kernel,
                                  "failed", record.cause, record.error))


def _dead_worker(job: ImageJob, why: str) -> tuple[list[KernelRecord], dict]:
    record = KernelRecord(job.file, job.image, job.arch,
                          "sass" if job.kind == "cubin" else "ptx", None, "failed",
                          "WorkerDied", f"the workers analysing this image died: {why}")
    return [record], {"nvdisasm": 0.0, "parse": 0.0, "analysis": 0.0}
