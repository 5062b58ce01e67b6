"""``kernelcheck run [--log FILE] [--report FILE] [--recover] -- CMD ...``: validate every kernel
launch of a program at launch time, with no change to the program.

The command runs with the interception library preloaded (:mod:`kernelcheck.shim`); its
exit status is returned unchanged, and a summary of the instances seen (idempotent, not
idempotent, not proven, per kernel with the deciding rules) is printed to stderr at exit.
When the library cannot be built or loaded, the program is not run (exit status 2) unless
``--allow-unchecked`` is given. On a machine without a CUDA driver the program runs on the
stand-in driver (``--driver``).
With ``--recover`` the shim also saves, before each launch, the bytes its verdict says a
replay needs, and recovers faults the driver reports (docs/shim.md, "Recovery through the
shim").
"""

from __future__ import annotations

import argparse
import json

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
                    "kernel instance was found to be when it exits.")
    parser.add_argument("--log", metavar="FILE", help="write one JSON line per instance")
    parser.add_argument("--report", metavar="FILE", help="write the summary as JSON")
    parser.add_argument("--no-helper", action="store_true",
                        help="do not analyse new images (use only the cache)")
    parser.add_argument("--quiet", action="store_true", help="do not print the summary")
    parser.add_argument("--recover", action="store_true",
                        help="save what each launch needs to be replayed, and replay "
                             "launches the driver reports as failed")
    parser.add_argument("--recover-not-proven", choices=("save", "skip"), default="save",
                        help="for instances not proven idempotent: save the allocations "
                             "they may write (save, default) or leave them unrecoverable")
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


def run(args: argparse.Namespace) -> int:
    """Run the command; returns its exit status."""
    from kernelcheck.errors import KernelcheckError
    from kernelcheck.shim.launcher import RunSetupError, run_command

    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        raise KernelcheckError("run: no command given (kernelcheck run -- CMD ...)")
    env = None
    if args.recover:
        import os

        env = dict(os.environ, KERNELCHECK_RECOVER="1",
                   KERNELCHECK_RECOVER_NOT_PROVEN=args.recover_not_proven)
    try:
        result = run_command(command, log=args.log, helper=not args.no_helper,
                             quiet=args.quiet, env=env, analysis_wait=args.analysis_wait,
                             allow_unchecked=args.allow_unchecked, driver=args.driver)
    except RunSetupError as error:
        raise KernelcheckError(f"the program was not run: {error}; --allow-unchecked runs "
                               f"it without kernelcheck") from error
    if args.report and result.report is not None:
        with open(args.report, "w") as handle:
            json.dump(result.report.to_json(), handle, indent=2)
            handle.write("\n")
    return result.returncode
