"""``kernelcheck analyze FILE...``: per kernel, what it is made of and what is proven about it.

FILE is a ``.ptx``, a cubin, a fatbin, an executable or a shared library; several may be
given, a directory is searched for them (by content), a quoted glob is expanded, and ``-``
reads standard input. Without FILE, the bundled example (``elementwise.ptx``, five small
kernels compiled for sm_90) is analysed, so the command shows what it does on a fresh
install.

Each kernel gets its idempotency class (:mod:`kernelcheck.analysis.summary`): ``always``,
``never``, ``conditional`` (with the condition in words) or ``not_proven`` (with the
reason). ``--format text`` (the default) adds its structure; ``json`` writes one document;
``jsonl`` and ``sarif`` write one record per kernel (:mod:`kernelcheck.output.records`),
analysing the images of the inputs one by one (over ``--jobs`` worker processes, or Dask),
so they suit whole libraries (a kernel whose code is the same as one already analysed
gets that record, renamed: :mod:`kernelcheck.sharing`; a SASS kernel with a global atomic
that is not idempotent in effect is ``never`` from that instruction alone:
:mod:`kernelcheck.sass.decided`); ``--kernel-timeout`` bounds the
analysis of each kernel
(:mod:`kernelcheck.analysis.budget`: past it, the kernel is ``not_proven``). ``--fail-on``
sets the exit status
(:mod:`kernelcheck.commands.exitcodes`). ``--instance`` with ``--kernel``, ``--grid`` and
``--block`` decides one kernel instance with its LaunchCheck.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from contextlib import redirect_stdout
from importlib import resources
from pathlib import Path

from kernelcheck.commands.common import (
    add_format,
    add_output,
    add_quiet,
    examples,
    positive_int,
    positive_seconds,
    say,
)
from kernelcheck.commands.exitcodes import (
    ANALYZE_CLASSES,
    EXIT_ERROR,
    add_fail_on,
    findings_status,
)
from kernelcheck.errors import KernelcheckError
from kernelcheck.inputs import InputFile, LoadedInput, LoadedModule, expand_inputs, load_input

BUNDLED_EXAMPLE = "elementwise.ptx"

__all__ = ["register", "run", "bundled_example"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``analyze`` sub-command."""
    parser = subparsers.add_parser(
        "analyze",
        help="analyse the kernels of .ptx, .cubin, fatbin, executable or shared library files",
        description=(
            "Analyse every kernel in the FILEs: idempotency class with its conditions or "
            "reasons, and (text report) parameters, blocks, loops and memory accesses. "
            "Without FILE, the bundled example kernels are analysed."
        ),
        epilog=examples(
            "kernelcheck analyze build/kernels.ptx --kernel axpby",
            "kernelcheck analyze build/ --format sarif -o kernelcheck.sarif "
            "--fail-on never,not_proven",
            "kernelcheck analyze libtorch_cuda.so --arch sm_90 --format jsonl -o torch.jsonl "
            "--jobs 8 --kernel-timeout 10"),
    )
    parser.add_argument("files", nargs="*", metavar="FILE",
                        help="inputs: files, directories (searched recursively for PTX, "
                             "cubins, fatbins and binaries with device code), quoted globs, "
                             "or '-' for standard input (default: the bundled example)")
    add_format(parser, "the report")
    add_output(parser, "the report")
    add_fail_on(parser, ANALYZE_CLASSES, "kernel classes", example="never,not_proven")
    parser.add_argument("--kernel", metavar="PATTERN",
                        help="only kernels matching PATTERN: mangled or demangled name, "
                             "short name (axpby), template name (axpby<float>) or a regular "
                             "expression")
    parser.add_argument("--full-names", action="store_true",
                        help="name kernels by their demangled signature, not their short name")
    parser.add_argument("--arch", metavar="SM", help="only images for this architecture")
    parser.add_argument("--functions", action="store_true",
                        help="also report device functions (.func), not only kernels "
                             "(text and json)")
    parser.add_argument("--prefer", choices=("sass", "ptx", "both"), default="sass",
                        help="where a binary holds both a cubin and PTX for an "
                             "architecture, analyse the SASS (it is what runs), the PTX, or "
                             "both")
    parser.add_argument("--jobs", type=positive_int, metavar="N",
                        help="worker processes for --format jsonl or sarif (default: 1, in "
                             "this process)")
    parser.add_argument("--kernel-timeout", type=positive_seconds, metavar="SECONDS",
                        help="stop the analysis of a kernel that runs past SECONDS and report "
                             "it not_proven ('analysis budget of SECONDS s exceeded'), for "
                             "whole libraries (default: no budget)")
    parser.add_argument("--no-sharing", dest="sharing", action="store_false",
                        help="with --format jsonl or sarif, analyse every kernel even when "
                             "another kernel of the inputs has the same code (by default "
                             "such a kernel gets that kernel's record, renamed)")
    parser.add_argument("--no-early-verdicts", dest="early_verdicts", action="store_false",
                        help="with --format jsonl or sarif, analyse every SASS kernel whole "
                             "(by default a kernel with a global atomic add, inc, dec, xor or "
                             "CAS is reported never idempotent from that instruction alone: "
                             "kernelcheck.sass.decided)")
    from kernelcheck.executor import add_executor_options

    add_executor_options(parser, with_jobs=False)
    parser.add_argument("--instance", metavar="PARAMS",
                        help="decide one instance of --kernel: 'name=value,...' with PTX "
                             "parameter names or p0..pN; integers (0x...), floats, or "
                             "hex:<bytes> for an aggregate")
    parser.add_argument("--grid", metavar="X[,Y,Z]", default="1",
                        help="grid dimensions of the instance")
    parser.add_argument("--block", metavar="X[,Y,Z]", default="1",
                        help="block dimensions of the instance")
    parser.add_argument("--allocations", metavar="BASE:SIZE,...",
                        help="live device allocations, for accesses whose address depends "
                             "on memory contents")
    parser.add_argument("--regions", action="store_true",
                        help="also place re-executable region boundaries in each kernel "
                             "(docs/regions.md; needs PTX): instruction ranges, source lines, "
                             "the clobber each boundary cuts, live state in bytes")
    parser.add_argument("--plot", metavar="FILE.png",
                        help="draw the class histogram of the kernels by kernel family "
                             "(needs the plot extra: matplotlib)")
    parser.add_argument("--warm-cache", action="store_true",
                        help="store the analysis of FILE (.ptx, .cubin or fatbin) in the "
                             "analysis cache that `kernelcheck run` reads")
    add_quiet(parser)
    parser.add_argument("--json", action="store_true",
                        help="same as --format json (kept for one release)")
    parser.add_argument("--jsonl", metavar="OUT",
                        help="same as --format jsonl -o OUT over every core (kept for one "
                             "release)")
    parser.set_defaults(func=run)


def bundled_example() -> Path:
    """Path of the example PTX shipped inside the package."""
    return Path(str(resources.files("kernelcheck") / "examples" / BUNDLED_EXAMPLE))


def _settle_options(args: argparse.Namespace) -> None:
    """Fold the old spellings into the new ones and refuse what does not go together."""
    from kernelcheck.commands.common import UsageError

    usage = lambda text: UsageError(text, "kernelcheck analyze")  # noqa: E731
    if args.json:
        if args.format not in ("text", "json"):
            raise usage("--json and --format disagree: give one")
        args.format = "json"
    if args.jsonl:
        if args.format not in ("text", "jsonl") or args.output not in (None, args.jsonl):
            raise usage("--jsonl OUT is --format jsonl -o OUT: give one spelling")
        args.format, args.output = "jsonl", args.jsonl
        args.every_core = args.jobs is None  # the old option ran over every core
    pool = args.jobs not in (None, 1) or args.cluster or args.scheduler
    if pool and args.format not in ("jsonl", "sarif"):
        raise usage("--jobs, --cluster and --scheduler apply to --format jsonl or sarif")
    if args.instance is not None and args.format in ("jsonl", "sarif") and pool:
        raise usage("--instance is decided in this process: leave out --jobs, --cluster, "
                    "--scheduler")
    if args.kernel_timeout is not None and args.warm_cache:
        raise usage("--kernel-timeout bounds the analysis of the report, not --warm-cache")
    if args.regions and args.format in ("jsonl", "sarif"):
        raise usage("--regions is shown by --format text or json")
    from kernelcheck.launch.params import parse_dims

    parse_dims(args.grid, "--grid")  # past CUDA's limits: refused even without --instance
    parse_dims(args.block, "--block")


def _check_outputs(args: argparse.Namespace) -> None:
    from kernelcheck.output.files import check_writable

    if args.output not in (None, "-"):
        check_writable(args.output, "--output")
    if args.plot:
        check_writable(args.plot, "--plot")
        from kernelcheck.output.plots import require_matplotlib

        require_matplotlib("--plot")


def run(args: argparse.Namespace) -> int:
    """Analyse the inputs and write the report; returns the exit status."""
    _settle_options(args)
    _check_outputs(args)
    if not args.files:
        inputs = [InputFile(str(bundled_example()))]
        if args.format == "text" and args.output in (None, "-") and not args.quiet:
            print(f"(no FILE given: analysing the bundled example {BUNDLED_EXAMPLE})\n")
    else:
        inputs = expand_inputs(args.files)
    if args.warm_cache:
        from kernelcheck.cache.warm import warm_cache_command

        status = 0
        for item in inputs:
            status = max(status, warm_cache_command(item.path, args.arch))
        return status
    instance = _instance_arguments(args)
    if args.format in ("jsonl", "sarif") and instance is None:
        records, errors = _library_records(inputs, args)
    else:
        records, errors = _detailed(inputs, args, instance)
    if args.format in ("jsonl", "sarif"):
        _write_records(records, args)
    if args.plot:
        from kernelcheck.output.plots import class_histogram

        say(class_histogram(records, args.plot), args.quiet)
    if args.format != "text" and len(records) > 1:
        from kernelcheck.output.histogram import class_table

        say(class_table(records), args.quiet)
    for error in errors:
        print(f"kernelcheck: error: {error}", file=sys.stderr)
    _say_matches(args, records)
    if errors:
        return EXIT_ERROR
    return findings_status((r["class"] for r in records), args.fail_on)


def _say_matches(args: argparse.Namespace, records: list[dict]) -> None:
    if args.kernel is None or args.quiet:
        return
    names = list(dict.fromkeys(r["kernel"] for r in records if r.get("kernel")))
    if len(names) > 1:
        from kernelcheck.commands.analyze_report import kernel_labels

        labels = kernel_labels(names, args.full_names)
        shown = ", ".join(labels[n] for n in names[:8])
        more = f" and {len(names) - 8} more" if len(names) > 8 else ""
        say(f"kernelcheck: --kernel {args.kernel!r} matched {len(names)} kernels: "
            f"{shown}{more}")


# -- the detailed engine: text and json, --instance --------------------------------------

def _detailed(inputs: list[InputFile], args: argparse.Namespace, instance
              ) -> tuple[list[dict], list[str]]:
    """Load every input in this process, analyse the kernels, write text or json."""
    from kernelcheck.commands import analyze_report as report

    loaded_all = []
    spent: dict[int, float] = {}  # seconds each kernel's summary took, by id of its function
    for item in inputs:
        loaded = load_input(item.path, arch=args.arch, prefer=args.prefer, data=item.data)
        reports = list(_reports(loaded, args.kernel, args.functions, args.quiet,
                                args.kernel_timeout, spent))
        if args.regions and not any(entry.language == "ptx" for entry, _ in reports):
            raise KernelcheckError(f"{loaded.path}: --regions needs PTX, and this input has "
                                   f"only SASS (give the .ptx, or --prefer ptx for a binary "
                                   f"that embeds PTX)")
        loaded_all.append((loaded, reports))
    if args.kernel is not None and not any(k for _, reports in loaded_all
                                           for _, k in reports):
        raise KernelcheckError(_no_kernel_message(args.kernel, loaded_all))
    records: list[dict] = []
    verdicts: dict = {}
    for loaded, reports in loaded_all:
        if instance is not None:
            verdicts.update(_decide(reports, instance, args.kernel_timeout, spent))
        records += _records_of(loaded, reports, verdicts, args.full_names)
    errors = [f"{loaded.path}: {e}" if not e.startswith(loaded.path) else e
              for loaded, _ in loaded_all for e in loaded.errors]
    if args.format in ("jsonl", "sarif"):
        return records, errors
    from kernelcheck.output.files import open_output

    labels = report.kernel_labels((f.name for _, reports in loaded_all for _, ks in reports
                                   for f, _, _ in ks), args.full_names)
    with open_output(args.output) as out, redirect_stdout(out):
        if args.format == "json":
            documents = []
            for loaded, reports in loaded_all:
                document = report.json_document(loaded, reports, verdicts, instance)
                if args.regions:
                    report.add_regions(document, reports)
                documents.append(document)
            whole = documents[0] if len(documents) == 1 else {
                "format_version": report.JSON_FORMAT_VERSION, "inputs": documents}
            json.dump(whole, out, indent=2)
            out.write("\n")
        else:
            for loaded, reports in loaded_all:
                report.print_text(loaded, reports, verdicts, instance, labels)
                if args.regions:
                    report.print_regions(reports)
            if len(records) > 1:
                from kernelcheck.output.histogram import class_table

                print("\n" + class_table(records))
    return records, errors


def _no_kernel_message(pattern: str, loaded_all) -> str:
    from kernelcheck.names import short_name

    names = sorted({short_name(f.name) for loaded, _ in loaded_all for m in loaded.modules
                    for f in m.module.kernels})
    shown = ", ".join(names[:20]) + (f" and {len(names) - 20} more" if len(names) > 20 else "")
    where = loaded_all[0][0].path if len(loaded_all) == 1 else f"{len(loaded_all)} inputs"
    return f"{where}: no kernel matches {pattern!r} (kernels: {shown or 'none'})"


def _records_of(loaded: LoadedInput, reports, verdicts: dict, full_names: bool) -> list[dict]:
    from kernelcheck.output.records import kernel_record

    out = []
    for entry, kernels in reports:
        for function, _structure, summary in kernels:
            if summary is None:
                continue
            file = loaded.path
            out.append(kernel_record(
                file=file, image=entry.origin, arch=entry.arch, language=entry.language,
                module=entry.module, function=function, summary=summary,
                verdict=verdicts.get(id(function)), full_names=full_names))
    return out


def _instance_arguments(args: argparse.Namespace):
    """``(values, grid, block, allocations)`` from the command line, or ``None``."""
    from kernelcheck.launch.params import InstanceInputError, parse_dims, parse_instance_text

    if args.instance is None:
        if args.allocations is not None:
            raise InstanceInputError("--allocations needs --instance")
        return None
    if args.kernel is None:
        raise InstanceInputError("--instance needs --kernel NAME")
    values = parse_instance_text(args.instance)
    grid = parse_dims(args.grid, "--grid")
    block = parse_dims(args.block, "--block")
    allocations = None
    if args.allocations is not None:
        allocations = []
        for item in args.allocations.split(","):
            base, sep, size = item.partition(":")
            try:
                allocations.append((int(base, 0), int(size, 0)))
            except ValueError:
                raise InstanceInputError(f"malformed allocation {item[:80]!r} (expected "
                                         f"BASE:SIZE, e.g. 0x7f0000000000:4096)") from None
            if not sep or allocations[-1][1] <= 0 or allocations[-1][0] < 0 or \
                    allocations[-1][0] + allocations[-1][1] > 1 << 64:
                raise InstanceInputError(f"malformed allocation {item[:80]!r} (expected "
                                         f"BASE:SIZE with SIZE > 0 inside 64-bit addresses)")
    return values, grid, block, allocations


def _decide(reports, instance, timeout: float | None = None,
            spent: dict[int, float] | None = None) -> dict:
    """Per analysed kernel (by ``id`` of its function), the instance verdict.

    With a ``timeout``, the verdict has what the kernel's summary left of it (``spent``);
    a kernel past it becomes ``not_proven`` in ``reports`` too, and is decided by that.
    """
    from kernelcheck.analysis.budget import BudgetExceeded, budget_reason, within_budget
    from kernelcheck.analysis.summary import unanalysed_summary
    from kernelcheck.launch.evaluate import evaluate
    from kernelcheck.launch.params import param_buffer

    values, grid, block, allocations = instance
    spent = spent or {}
    out = {}
    for _entry, kernels in reports:
        for k, (function, structure, summary) in enumerate(kernels):
            if summary is None:
                continue
            params = param_buffer(function, values)
            left = None if timeout is None else timeout - spent.get(id(function), 0.0)
            try:
                if left is not None and left <= 0:
                    raise BudgetExceeded
                out[id(function)] = within_budget(
                    lambda s=summary, p=params: evaluate(s.launch_check, p, grid, block,
                                                         allocations), left)
            except BudgetExceeded:
                summary = unanalysed_summary(function, budget_reason(timeout))
                kernels[k] = (function, structure, summary)
                out[id(function)] = evaluate(summary.launch_check, params, grid, block,
                                             allocations)
    return out


def _reports(loaded: LoadedInput, only: str | None, functions: bool, quiet: bool,
             timeout: float | None = None, spent: dict[int, float] | None = None):
    from kernelcheck.names import match_kernels
    from kernelcheck.output.progress import ProgressBar
    from kernelcheck.structure import kernel_structure

    total = sum(len(e.module.kernels) for e in loaded.modules)
    meter = ProgressBar(total, "kernels", None if not quiet else False) if total > 8 else None
    try:
        for entry in loaded.modules:
            candidates = [f for f in entry.module.functions
                          if f.body is not None and (f.is_kernel or functions)]
            if only is not None:
                keep = set(match_kernels(only, [f.name for f in candidates]))
                candidates = [f for f in candidates if f.name in keep]
            chosen = []
            for function in candidates:
                structure = kernel_structure(function, entry.module)
                start = time.perf_counter()
                chosen.append((function, structure, _summary(entry, function, timeout)))
                if spent is not None:
                    spent[id(function)] = time.perf_counter() - start
                if meter is not None:
                    meter.step()
            yield entry, chosen
    finally:
        if meter is not None:
            meter.finish()


def _summary(entry: LoadedModule, function, timeout: float | None = None):
    """The idempotency analysis of ``function`` (SASS kernels are lifted first); past
    ``timeout`` seconds, a ``not_proven`` summary saying so."""
    from kernelcheck.analysis.budget import BudgetExceeded, budget_reason, within_budget
    from kernelcheck.analysis.summary import analyze_kernel, unanalysed_summary
    from kernelcheck.errors import UnsupportedFeature

    if not function.is_kernel:
        return None
    analyse = analyze_kernel
    if entry.language != "ptx":
        from kernelcheck.sass.analysis import analyze_sass_kernel

        analyse = analyze_sass_kernel
    try:
        return within_budget(lambda: analyse(entry.module, function), timeout)
    except BudgetExceeded:
        return unanalysed_summary(function, budget_reason(timeout))
    except UnsupportedFeature as error:  # a construct not modelled: not proven, and why
        return unanalysed_summary(function, str(error))


# -- the library engine: jsonl and sarif, image by image -----------------------------------

def _library_records(inputs: list[InputFile], args: argparse.Namespace
                     ) -> tuple[list[dict], list[str]]:
    """Analyse image by image over an executor (:func:`kernelcheck.corpus.run_corpus`)."""
    from kernelcheck.corpus import run_corpus
    from kernelcheck.executor import executor_from_args
    from kernelcheck.output.progress import progress_enabled

    records: list[dict] = []
    failures: list[str] = []

    def keep(record) -> None:
        if record.analysis is not None:
            item = record.to_json()
            records.append(item)
        elif record.kernel is None:
            failures.append(f"{record.file}:{record.image}: {record.cause}: {record.error}")
        else:
            from kernelcheck.output.records import failure_record

            records.append(failure_record(file=record.file, image=record.image,
                                          arch=record.arch, language=record.language,
                                          kernel=record.kernel, cause=record.cause or "",
                                          error=record.error or ""))

    jobs = args.jobs
    if jobs is None and not getattr(args, "every_core", False):
        jobs = 1
    options = {"kernel": args.kernel, "full_names": args.full_names,
               "kernel_timeout": args.kernel_timeout, "early_verdicts": args.early_verdicts}
    with executor_from_args(args, jobs=jobs) as executor:
        summary = run_corpus(inputs, arch=args.arch, prefer=args.prefer, stage="analysis",
                             on_record=keep, executor=executor, options=options,
                             progress=progress_enabled(args.quiet), share=args.sharing)
    if args.kernel is not None and not records and not failures:
        raise KernelcheckError(f"no kernel matches {args.kernel!r} in "
                               f"{', '.join(i.path for i in inputs[:3])}"
                               f"{' ...' if len(inputs) > 3 else ''}")
    if not args.quiet:
        ok = summary.kernels - summary.kernels_failed
        say(f"kernelcheck: {summary.images} image(s), {summary.kernels} kernel(s): {ok} "
            f"analysed, {summary.kernels_failed} failed, {summary.images_failed} image(s) "
            f"failed, in {summary.seconds:.1f} s")
        if summary.kernels_decided_early:
            say(f"kernelcheck: {summary.kernels_decided_early} kernel(s) have a global atomic "
                "add, inc, dec, xor or CAS: never idempotent from that instruction, the rest "
                "not analysed (--no-early-verdicts analyses them whole)")
        if summary.kernels_shared:
            say(f"kernelcheck: {summary.kernels_shared} kernel(s) have the same code as a "
                "kernel analysed before them and got its record")
        quantiles = summary.kernel_time_quantiles()
        if quantiles is not None:
            say("kernelcheck: analysis time per kernel: median {}, p90 {}, max {}".format(
                *(_duration(q) for q in quantiles)))
    return records, list(summary.input_errors) + failures


def _duration(seconds: float) -> str:
    """``89 ms`` below a second, ``1.10 s`` from one."""
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.2f} s"


def _write_records(records: list[dict], args: argparse.Namespace) -> None:
    from kernelcheck.output.files import open_output

    with open_output(args.output) as out:
        if args.format == "jsonl":
            for record in records:
                out.write(json.dumps(record) + "\n")
            return
        from kernelcheck.output.sarif import ANALYZE_RULES, analyze_results, sarif_log

        log = sarif_log(analyze_results(records, args.fail_on), ANALYZE_RULES,
                        ["kernelcheck", *sys.argv[1:]])
        json.dump(log, out, indent=1)
        out.write("\n")
