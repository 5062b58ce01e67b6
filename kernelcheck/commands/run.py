"""``kernelcheck run [-o FILE --format F] [--fail-on V] [--recover] -- CMD ...``: validate every
kernel launch of a program at launch time, with no change to the program.

The command runs with the interception library preloaded (:mod:`kernelcheck.shim`); its
exit status is returned unchanged unless ``--fail-on`` finds one of the verdicts it names
(status 1) or kernelcheck itself fails (status 2). A summary of the instances seen
(idempotent, not idempotent, not proven, per kernel with the deciding rules) is printed to
stderr at exit, and ``-o FILE`` writes the report in ``--format`` (text, json: the summary
per kernel; jsonl: one line per instance with its kernel's class and reason; sarif: one
result per kernel and verdict). When the library cannot be built or loaded, the program is
not run (exit status 2) unless ``--allow-unchecked`` is given. On a machine without a CUDA
driver the program runs on the stand-in driver (``--driver``).
With ``--recover`` the shim also saves, before each launch, the bytes its verdict says a
replay needs, and recovers faults the driver reports (docs/shim.md, "Recovery through the
shim").
"""

from __future__ import annotations

import argparse
import json
import os

from kernelcheck.commands.common import FORMATS, UsageError, add_quiet, examples
from kernelcheck.commands.exitcodes import EXIT_FINDINGS, RUN_VERDICTS, add_fail_on
from kernelcheck.shim.driver_choice import CHOICES
from kernelcheck.shim.launcher import DEFAULT_ANALYSIS_WAIT


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected seconds >= 0, got {text!r}")
    return value


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``run`` sub-command."""
    parser = subparsers.add_parser(
        "run", help="run a program and validate each kernel launch at launch time",
        description="Run CMD with the kernelcheck driver shim preloaded; print what each "
                    "kernel instance was found to be when it exits. The exit status is "
                    "CMD's own, unless --fail-on finds a verdict it names (1) or kernelcheck "
                    "fails (2).",
        epilog=examples("kernelcheck run --format sarif -o run.sarif --fail-on "
                        "not_idempotent -- python train.py"))
    parser.add_argument("--format", choices=FORMATS, default="text",
                        help="how the report written with -o is written: text or json "
                             "(the summary per kernel), jsonl (one line per instance, with "
                             "its kernel's class and reason), sarif")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="write the report to FILE (replaced only when complete)")
    add_fail_on(parser, RUN_VERDICTS, "instance verdicts", example="not_idempotent")
    parser.add_argument("--log", metavar="FILE",
                        help="same as --format jsonl -o FILE (kept for one release; may be "
                             "given with --report)")
    parser.add_argument("--report", metavar="FILE",
                        help="same as --format json -o FILE (kept for one release; may be "
                             "given with --log)")
    parser.add_argument("--no-helper", action="store_true",
                        help="do not analyse new images (use only the cache)")
    add_quiet(parser)
    parser.add_argument("--recover", action="store_true",
                        help="save what each launch needs to be replayed, and replay "
                             "launches the driver reports as failed")
    parser.add_argument("--recover-not-proven", choices=("save", "skip"), default="save",
                        help="for instances not proven idempotent: save the allocations "
                             "they may write (save) or leave them unrecoverable")
    parser.add_argument("--analysis-wait", type=_seconds, default=DEFAULT_ANALYSIS_WAIT,
                        metavar="S",
                        help="at exit, wait up to S seconds for the analysis of kernels "
                             "first seen in this run, so their launches get a verdict "
                             "(default %(default)g; 0: do not wait)")
    parser.add_argument("--driver", choices=CHOICES, default="auto",
                        help="the CUDA driver the program gets: the system's, kernelcheck's "
                             "stand-in (runs PTX kernels on the CPU emulator), or auto: the "
                             "system's if there is one (default %(default)s)")
    parser.add_argument("--allow-unchecked", action="store_true",
                        help="if the interception library cannot be built or loaded, run "
                             "the program anyway, unchecked (without it: exit status 2)")
    parser.add_argument("command", nargs=argparse.REMAINDER, metavar="-- CMD ...")
    parser.set_defaults(func=run)


def _outputs(args: argparse.Namespace) -> dict[str, str]:
    """``{format: file}`` of the reports to write (``-o`` and the old spellings)."""
    outputs: dict[str, str] = {}
    if args.output not in (None, "-"):
        outputs[args.format] = args.output
    for fmt, path in (("jsonl", args.log), ("json", args.report)):
        if path:
            if fmt in outputs and outputs[fmt] != path:
                raise UsageError(f"--{'log' if fmt == 'jsonl' else 'report'} and -o "
                                 f"--format {fmt} name two files", "kernelcheck run")
            outputs[fmt] = path
    return outputs


def run(args: argparse.Namespace) -> int:
    """Run the command; returns its exit status (or 1 when --fail-on triggers)."""
    from kernelcheck.errors import KernelcheckError
    from kernelcheck.output.files import check_writable
    from kernelcheck.shim.launcher import RunSetupError, run_command

    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        raise UsageError("run: no command given (kernelcheck run -- CMD ...)",
                         "kernelcheck run")
    outputs = _outputs(args)
    for path in outputs.values():
        check_writable(path, "--output")
    env = None
    if args.recover:
        env = dict(os.environ, KERNELCHECK_RECOVER="1",
                   KERNELCHECK_RECOVER_NOT_PROVEN=args.recover_not_proven)
    log = _temporary_log(outputs["jsonl"]) if "jsonl" in outputs else None
    try:
        try:
            result = run_command(command, log=log, helper=not args.no_helper,
                                 quiet=args.quiet, env=env, analysis_wait=args.analysis_wait,
                                 allow_unchecked=args.allow_unchecked, driver=args.driver)
        except RunSetupError as error:
            raise KernelcheckError(f"the program was not run: {error}; --allow-unchecked "
                                   f"runs it without kernelcheck") from error
        if result.report is not None:
            _write_reports(result, outputs, log, command)
    finally:
        if log is not None and os.path.exists(log):
            os.unlink(log)
    if result.report is not None:
        from kernelcheck.commands.exitcodes import findings_status

        found = [v for k in result.report.kernels for v in RUN_VERDICTS if getattr(k, v)]
        if findings_status(found, args.fail_on):
            return EXIT_FINDINGS
    return result.returncode


def _temporary_log(path: str) -> str:
    """Where the shim writes the instance log before it is completed with classes."""
    directory = os.path.dirname(os.path.abspath(path))
    return os.path.join(directory, f".{os.path.basename(path)}.{os.getpid()}.log")


def _write_reports(result, outputs: dict[str, str], log: str | None, command) -> None:
    from kernelcheck.output.files import AtomicFile
    from kernelcheck.shim.report import format_report

    report = result.report
    for fmt, path in outputs.items():
        with AtomicFile(path, option="--output") as out:
            if fmt == "json":
                json.dump(report.to_json(), out, indent=2)
                out.write("\n")
            elif fmt == "text":
                out.write(format_report(report) + "\n")
            elif fmt == "jsonl":
                _write_instances(report, log, out)
            else:
                from kernelcheck.output.sarif import run_sarif

                json.dump(run_sarif(report, ["kernelcheck", "run", "--", *command],
                                    result.returncode), out, indent=1)
                out.write("\n")


def _write_instances(report, log: str | None, out) -> None:
    """The shim's instance log, each line completed with its kernel's class and reason."""
    from kernelcheck.names import short_name

    by_name = {}
    for k in report.kernels:
        by_name.setdefault(k.name, k)
    if log is None or not os.path.exists(log):
        return
    with open(log) as source:
        for line in source:
            try:
                item = json.loads(line)
            except ValueError:
                continue  # a line cut by a process killed mid-write
            kernel = by_name.get(item.get("kernel"))
            item["name"] = short_name(item.get("kernel") or "")
            item["class"] = kernel.kernel_class if kernel and kernel.kernel_class else \
                "not_proven"
            reasons = list(kernel.reasons) if kernel else []
            item["reason"] = reasons[0] if reasons else (
                "no analysis of the kernel was ready" if item.get("verdict") == "not_proven"
                else "")
            out.write(json.dumps(item) + "\n")
