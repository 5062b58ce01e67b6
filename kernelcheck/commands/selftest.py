"""``kernelcheck selftest [--device] [--quick] [--section NAME ...] [-o report.json]``: check
kernelcheck's verdicts, emulator, recovery and shim against the device.

Prints one table (a row per section, then every failure with a one-line reproducer) and
writes the full report as JSON with ``-o``. Exit status: 0 every check passed (sections that
cannot run here are skipped, saying why), 1 a check failed, 2 the self-test itself could not
run. Without a GPU the device is kernelcheck's stand-in driver (the CPU emulator); sections
that need real hardware or a CUDA PyTorch say "skipped: no device". docs/selftest.md.
"""

from __future__ import annotations

import argparse
import json
import sys

from kernelcheck.selftest.runner import SECTIONS, SelftestOptions
from kernelcheck.shim.driver_choice import CHOICES


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``selftest`` sub-command."""
    parser = subparsers.add_parser(
        "selftest", help="check verdicts, emulator, recovery and shim against the device",
        description="Run kernelcheck's self-test against the CUDA device (a GPU, or the "
                    "stand-in driver on the CPU emulator), section by section, each "
                    "time-capped; print one table; exit 0 all passed, 1 a check failed, "
                    "2 the self-test could not run.")
    parser.add_argument("--device", action="store_true",
                        help="require real hardware: the system's driver and a GPU "
                             "(exit status 2 without one)")
    parser.add_argument("--quick", action="store_true",
                        help="one instance per kernel, fewer trials and launches")
    parser.add_argument("--section", action="append", choices=tuple(SECTIONS),
                        metavar="NAME", dest="sections",
                        help=f"run only this section (repeatable): {', '.join(SECTIONS)}")
    parser.add_argument("-o", "--output", metavar="FILE", help="write the report as JSON")
    parser.add_argument("--driver", choices=CHOICES, default="auto",
                        help="the CUDA driver to test through (default %(default)s: the "
                             "system's if there is one, else the stand-in)")
    parser.add_argument("--case", action="append", default=[], metavar="NAME",
                        help="check only this instance (KERNEL#N from expected.toml, "
                             "KERNEL~rN drawn with --seed); repeatable")
    parser.add_argument("--seed", type=int, default=1,
                        help="seed of drawn instances, partial runs and faults "
                             "(default %(default)s)")
    parser.add_argument("--budget", type=float, metavar="S",
                        help="seconds for the whole run, shared among the sections "
                             "(default 250, 160 with --quick)")
    parser.add_argument("--random-per-kernel", type=int, metavar="N",
                        help="drawn instances per kernel in a full run (default 6)")
    parser.add_argument("--trials", type=int, metavar="N",
                        help="fault-injection trials of the recovery section")
    parser.add_argument("--fixtures", metavar="DIR",
                        help="the fixture corpus (default: the checkout's fixtures/)")
    parser.add_argument("--assume-idempotent", action="append", default=[], metavar="CASE",
                        help="treat CASE as called idempotent whatever the analysis says "
                             "(shows the re-execution oracle failing on a wrong verdict)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the self-test; returns its exit status."""
    from kernelcheck.selftest.runner import run_selftest

    options = SelftestOptions(
        sections=tuple(s for s in SECTIONS if s in (args.sections or SECTIONS)), quick=args.quick,
        device=args.device, driver=args.driver, seed=args.seed, cases=tuple(args.case),
        assume_idempotent=tuple(args.assume_idempotent), fixtures=args.fixtures,
        budget=args.budget, random_per_kernel=args.random_per_kernel, trials=args.trials)
    report = run_selftest(options, progress=lambda line: print(f"selftest: {line}",
                                                                file=sys.stderr, flush=True))
    print(report.table())
    if args.output:
        with open(args.output, "w") as handle:
            json.dump(report.to_json(), handle, indent=2)
            handle.write("\n")
    return report.exit_code
