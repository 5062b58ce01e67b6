"""``kernelcheck inject TARGET``: a fault-injection campaign on the emulator.

TARGET is a PTX file whose kernels are fixture workloads, or a fixture kernel name. Every
expected.toml instance of each kernel is a target (clobbering placements included), plus
its disjoint placement. Trials are seeded one by one from ``--seed``, so any split of the
trials gives the same rows.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from kernelcheck.errors import KernelcheckError

_REGISTER_GROUPS = ("G_FP32", "G_FP64", "G_LD", "G_PR", "G_OTHERS", "G_GP")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``inject`` sub-command."""
    from kernelcheck.faults.models import MODELS
    parser = subparsers.add_parser(
        "inject", help="fault-injection campaign on the CPU emulator",
        description="Inject faults into fixture kernel instances on the emulator, classify "
        "outcomes (masked, SDC, DUE; with --recover: recovered, unrecovered), print the "
        "outcome table and write CSV, JSON and a figure.")
    parser.add_argument("target", help="PTX file of fixture kernels, or a fixture kernel name")
    parser.add_argument("--model", default="single", choices=MODELS, help="fault model")
    parser.add_argument("--groups", default=",".join(_REGISTER_GROUPS),
                        help="instruction groups for register models, comma-separated "
                        "(NVBitFI names; default %(default)s)")
    parser.add_argument("--trials", type=int, default=100, help="number of trials")
    parser.add_argument("--seed", type=int, default=0, help="campaign seed")
    parser.add_argument("--recover", action="store_true",
                        help="also run every trial through the recovery engine")
    parser.add_argument("--kernel", action="append", default=None,
                        help="only this kernel of the PTX file (repeatable)")
    parser.add_argument("--out", default="kernelcheck-inject",
                        help="output stem: STEM.csv, STEM.json, STEM.png")
    parser.add_argument("--no-figure", action="store_true", help="do not draw the figure")
    from kernelcheck.executor import add_executor_options

    add_executor_options(parser, jobs_help="run the trials over N local worker processes "
                         "(default 1: in this process)")
    parser.set_defaults(func=run)


def _kernels(args) -> list[str]:
    from kernelcheck.faults.targets import expected_kernels, targets_in
    path = Path(args.target)
    if path.suffix == ".ptx" or path.exists():
        kernels = list(targets_in(path))
    elif args.target in expected_kernels():
        kernels = [args.target]
    else:
        raise KernelcheckError(f"{args.target}: not a PTX file or a fixture kernel name")
    if args.kernel:
        kernels = [k for k in kernels if k in args.kernel]
    if not kernels:
        raise KernelcheckError(f"{args.target}: no fixture kernel with a workload selected")
    return kernels


def run(args: argparse.Namespace) -> int:
    """Run the campaign; exit status 0."""
    from kernelcheck.faults.campaign import Campaign
    from kernelcheck.faults.report import format_table, write_figure, write_results
    from kernelcheck.faults.targets import expected_kernels
    kernels = _kernels(args)
    path = Path(args.target) if Path(args.target).suffix == ".ptx" else None
    specs = []
    for k in kernels:
        n = len(expected_kernels()[k]["instances"])
        specs += [(k, i, False) for i in range(n)] + [(k, 0, True)]
    groups = [g.strip() for g in args.groups.split(",") if g.strip()]
    if args.model not in ("single", "double"):
        groups = ["-"]
    start = time.perf_counter()
    if (args.jobs or 1) > 1 or args.cluster or args.scheduler:
        from kernelcheck.executor import executor_from_args
        from kernelcheck.executor.campaign import run_campaign

        with executor_from_args(args) as executor:
            rows = run_campaign(executor, specs, args.trials, args.seed, args.model, groups,
                                recover=args.recover, path=path)
    else:
        campaign = Campaign(specs, path=path)
        rows = campaign.run(args.trials, args.seed, args.model, groups, recover=args.recover)
    seconds = time.perf_counter() - start
    print(f"{len(rows)} trials of model {args.model} over {len(specs)} instances of "
          f"{len(kernels)} kernels in {seconds:.1f} s (seed {args.seed}); "
          f"{args.trials - len(rows)} trials found no site for their group")
    print(format_table(rows))
    stem = Path(args.out)
    meta = {"target": args.target, "model": args.model, "groups": groups,
            "trials": args.trials, "seed": args.seed, "recover": args.recover,
            "kernels": kernels}
    csv_path, json_path = write_results(rows, stem, meta)
    print(f"wrote {csv_path} and {json_path}")
    if not args.no_figure:
        print(write_figure(rows, stem.with_suffix(".png")))
    return 0
