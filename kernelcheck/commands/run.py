"""``kernelcheck run [--log FILE] [--report FILE] [--recover] -- CMD ...``: validate every kernel
launch of a program at launch time, with no change to the program.

The command runs with the interception library preloaded (:mod:`kernelcheck.shim`); its
exit status is returned unchanged, and a summary of the instances seen (idempotent, not
idempotent, not proven, per kernel with the deciding rules) is printed to stderr at exit.
With ``--recover`` the shim also saves, before each launch, the bytes its verdict says a
replay needs, and recovers faults the driver reports (docs/shim.md, "Recovery through the
shim").
"""

from __future__ import annotations

import argparse
import json


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
    parser.add_argument("command", nargs=argparse.REMAINDER, metavar="-- CMD ...")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the command; returns its exit status."""
    from kernelcheck.errors import KernelcheckError
    from kernelcheck.shim.launcher import run_command

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
    result = run_command(command, log=args.log, helper=not args.no_helper, quiet=args.quiet,
                         env=env)
    if args.report and result.report is not None:
        with open(args.report, "w") as handle:
            json.dump(result.report.to_json(), handle, indent=2)
            handle.write("\n")
    return result.returncode
