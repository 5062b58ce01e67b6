"""``kernelcheck inject TARGET``: a fault-injection campaign on the emulator.

TARGET is a PTX file whose kernels are fixture workloads, or a fixture kernel name. Every
expected.toml instance of each kernel is a target (clobbering placements included), plus
its disjoint placement. Trials are seeded one by one from ``--seed``, so any split of the
trials gives the same rows.

The outcome table (or, with ``--format``, JSON, one JSON line per trial, or SARIF) goes to
standard output; ``-o STEM`` names the files: ``STEM.csv`` (one row per trial),
``STEM.json`` (settings, table, trials) and ``STEM.png`` (the outcome figure). Ctrl-C stops
the campaign: the trials completed so far are written as complete files marked partial, and
the exit status is 130.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from kernelcheck.commands.common import (
    FORMATS,
    UsageError,
    add_quiet,
    examples,
    positive_int,
    say,
)
from kernelcheck.commands.exitcodes import (
    EXIT_INTERRUPTED,
    INJECT_OUTCOMES,
    add_fail_on,
    findings_status,
)
from kernelcheck.errors import KernelcheckError

_REGISTER_GROUPS = ("G_FP32", "G_FP64", "G_LD", "G_PR", "G_OTHERS", "G_GP")
DEFAULT_STEM = "kernelcheck-inject"


def _seed(text: str) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}") from None
    if not 0 <= value < 2**63:
        raise argparse.ArgumentTypeError(f"expected an integer in [0, 2^63), got {text!r}")
    return value


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``inject`` sub-command."""
    from kernelcheck.faults.models import MODELS
    parser = subparsers.add_parser(
        "inject", help="fault-injection campaign on the CPU emulator",
        description="Inject faults into fixture kernel instances on the emulator, classify "
        "outcomes (masked, SDC, DUE; with --recover: recovered, unrecovered), print the "
        "outcome table and write CSV, JSON and a figure.",
        epilog=examples("kernelcheck inject saxpy --trials 200 --recover -o campaign "
                        "--fail-on SDC,unrecovered"))
    parser.add_argument("target", help="PTX file of fixture kernels, or a fixture kernel name")
    parser.add_argument("--model", default="single", choices=MODELS, help="fault model")
    parser.add_argument("--groups", default=",".join(_REGISTER_GROUPS),
                        help="instruction groups for register models, comma-separated "
                        "(NVBitFI names)")
    parser.add_argument("--trials", type=positive_int, default=100, help="number of trials")
    parser.add_argument("--seed", type=_seed, default=0, help="campaign seed")
    parser.add_argument("--recover", action="store_true",
                        help="also run every trial through the recovery engine")
    parser.add_argument("--kernel", action="append", default=None, metavar="PATTERN",
                        help="only kernels of the PTX file matching PATTERN (short or full "
                             "name, or a regular expression; repeatable)")
    parser.add_argument("--format", choices=FORMATS, default="text",
                        help="what is printed: the outcome table (text), the JSON document, "
                             "one JSON line per trial (jsonl) or SARIF")
    parser.add_argument("-o", "--output", metavar="STEM", default=None,
                        help=f"write STEM.csv, STEM.json and STEM.png (default: "
                             f"{DEFAULT_STEM})")
    parser.add_argument("--out", metavar="STEM",
                        help="same as -o STEM (kept for one release)")
    add_fail_on(parser, INJECT_OUTCOMES, "outcomes", example="SDC,unrecovered")
    parser.add_argument("--no-figure", action="store_true", help="do not draw the figure")
    add_quiet(parser)
    from kernelcheck.executor import add_executor_options

    add_executor_options(parser, jobs_help="run the trials over N local worker processes "
                         "(default 1: in this process)")
    parser.set_defaults(func=run)


def _kernels(args) -> list[str]:
    from kernelcheck.faults.targets import expected_kernels, targets_in
    path = Path(args.target)
    if path.is_dir():
        raise KernelcheckError(f"{args.target}: is a directory (give a PTX file or a fixture "
                               f"kernel name)")
    if path.suffix == ".ptx" or path.exists():
        if not path.exists():
            raise KernelcheckError(f"{args.target}: no such file")
        kernels = list(targets_in(path))
    elif args.target in expected_kernels():
        kernels = [args.target]
    else:
        raise KernelcheckError(f"{args.target}: not a PTX file or a fixture kernel name")
    if args.kernel:
        from kernelcheck.names import match_kernels

        chosen = {k for pattern in args.kernel for k in match_kernels(pattern, kernels)}
        kernels = [k for k in kernels if k in chosen]
    if not kernels:
        raise KernelcheckError(f"{args.target}: no fixture kernel with a workload selected")
    return kernels


def _groups(args) -> list[str]:
    from kernelcheck.faults.groups import GROUPS

    groups = [g.strip() for g in args.groups.split(",") if g.strip()]
    unknown = [g for g in groups if g not in GROUPS]
    if unknown or not groups:
        raise UsageError(f"argument --groups: unknown group {unknown[0] if unknown else ''!r} "
                         f"(expected a comma-separated list of {', '.join(GROUPS)})",
                         "kernelcheck inject")
    return groups if args.model in ("single", "double") else ["-"]


def _stem(args) -> Path:
    if args.out and args.output and args.out != args.output:
        raise UsageError("--out and -o name two stems: give one", "kernelcheck inject")
    return Path(args.output or args.out or DEFAULT_STEM)


def run(args: argparse.Namespace) -> int:
    """Run the campaign; exit status 0, 1 (--fail-on), or 130 when interrupted."""
    from kernelcheck.faults.targets import expected_kernels
    from kernelcheck.output.files import check_writable

    stem = _stem(args)
    groups = _groups(args)
    if stem.name in ("", ".", ".."):
        raise UsageError(f"-o {stem}: a stem names files (STEM.csv, ...)", "kernelcheck inject")
    for suffix in (".csv", ".json") + (() if args.no_figure else (".png",)):
        check_writable(stem.with_suffix(suffix), "-o")
    kernels = _kernels(args)
    path = Path(args.target) if Path(args.target).suffix == ".ptx" else None
    specs = []
    for k in kernels:
        n = len(expected_kernels()[k]["instances"])
        specs += [(k, i, False) for i in range(n)] + [(k, 0, True)]
    start = time.perf_counter()
    rows: list = []
    done = [0]  # trials finished in this process (the pool path leaves it at 0)
    interrupted = False
    try:
        _campaign(args, specs, groups, path, rows, done)
    except KeyboardInterrupt:
        interrupted = True
    seconds = time.perf_counter() - start
    rows.sort(key=lambda r: r.trial)
    meta = {"target": args.target, "model": args.model, "groups": groups,
            "trials": args.trials, "seed": args.seed, "recover": args.recover,
            "kernels": kernels, "partial": interrupted,
            "trials_completed": _completed(args, done[0], interrupted)}
    _report(args, rows, meta, stem, kernels, len(specs), seconds, path)
    if interrupted:
        say(f"kernelcheck: interrupted: {len(rows)} trials written, marked partial")
        return EXIT_INTERRUPTED
    found = [r.recovered_outcome or r.outcome for r in rows] + [r.outcome for r in rows]
    return findings_status(found, args.fail_on)


def _completed(args, done: int, interrupted: bool) -> int | None:
    """Trials run (with a site or not); ``None`` for an interrupted pool, whose chunks
    finish out of order (its rows are those of the chunks that finished)."""
    if not interrupted:
        return args.trials
    pool = (args.jobs or 1) > 1 or args.cluster or args.scheduler
    return None if pool else done


def _campaign(args, specs, groups, path, rows: list, done: list[int]) -> None:
    """Run the trials into ``rows`` (kept as they finish, for Ctrl-C)."""
    from kernelcheck.output.progress import ProgressBar, progress_enabled

    if (args.jobs or 1) > 1 or args.cluster or args.scheduler:
        from kernelcheck.executor import executor_from_args
        from kernelcheck.executor.campaign import run_campaign

        with executor_from_args(args) as executor:
            run_campaign(executor, specs, args.trials, args.seed, args.model, groups,
                         recover=args.recover, path=path,
                         progress=progress_enabled(args.quiet), sink=rows)
        return
    from kernelcheck.faults.campaign import Campaign

    campaign = Campaign(specs, path=path)
    meter = ProgressBar(args.trials, "trials", progress_enabled(args.quiet))
    try:
        for trial in range(args.trials):
            row = campaign.run_trial(trial, args.seed, args.model, groups, args.recover)
            if row is not None:
                rows.append(row)
            done[0] = trial + 1
            meter.step()
    finally:
        meter.finish()


def _kernel_classes(kernels: list[str], path: Path | None) -> dict[str, str]:
    """Each campaign kernel's idempotency class (for the records)."""
    from kernelcheck.analysis.summary import analyze_kernel
    from kernelcheck.faults.targets import fixture_ptx
    from kernelcheck.ptx.parser import parse_ptx_file

    classes = {}
    for kernel in kernels:
        try:
            module = parse_ptx_file(path or fixture_ptx(kernel))
            function = next(f for f in module.kernels
                            if f.name == kernel or f.name.startswith(kernel))
            classes[kernel] = analyze_kernel(module, function).kernel_class
        except (KernelcheckError, KeyError, StopIteration):
            classes[kernel] = "not_proven"
    return classes


def _trial_record(row, classes: dict) -> dict:
    from dataclasses import asdict

    from kernelcheck.names import short_name

    item = asdict(row)
    item.update({"kernel": row.kernel, "name": short_name(row.kernel),
                 "class": classes.get(row.kernel, "not_proven"),
                 "verdict": row.verdict or "", "outcome": row.recovered_outcome or row.outcome,
                 "reason": f"{row.fault} -> {row.outcome}"
                           + (f", with recovery {row.recovered_outcome}"
                              if row.recovered_outcome else "")})
    return item


def _report(args, rows, meta: dict, stem: Path, kernels, instances: int, seconds: float,
            path) -> None:
    from kernelcheck.faults.report import format_table, write_figure, write_results

    classes = _kernel_classes(kernels, path)
    csv_path, json_path = write_results(rows, stem, {**meta, "classes": classes})
    partial = " (partial: interrupted)" if meta["partial"] else ""
    if args.format == "text":
        run_count = meta["trials_completed"]
        no_site = (f"{run_count - len(rows)} trials found no site for their group"
                   if run_count is not None else "trials of unfinished chunks left out")
        print(f"{len(rows)} trials of model {args.model} over {instances} instances of "
              f"{len(kernels)} kernels in {seconds:.1f} s (seed {args.seed}); "
              f"{no_site}{partial}")
        print(format_table(rows))
    elif args.format == "json":
        sys.stdout.write(Path(json_path).read_text() + "\n")
    elif args.format == "jsonl":
        for row in rows:
            sys.stdout.write(json.dumps(_trial_record(row, classes)) + "\n")
    else:
        from kernelcheck.output.sarif import inject_sarif

        json.dump(inject_sarif(rows, classes, ["kernelcheck", *sys.argv[1:]], args.fail_on,
                               meta["partial"]), sys.stdout, indent=1)
        sys.stdout.write("\n")
    say(f"wrote {csv_path} and {json_path}{partial}", args.quiet)
    if not args.no_figure and rows:
        say(write_figure(rows, stem.with_suffix(".png")), args.quiet)
