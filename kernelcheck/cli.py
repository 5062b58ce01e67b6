"""The ``kernelcheck`` command line: one sub-command per module in :mod:`kernelcheck.commands`.

Each command module exposes ``register(subparsers)``, which adds its parser and sets
``func`` to a function taking the parsed arguments and returning the exit code. Errors of
kernelcheck's own (:class:`~kernelcheck.errors.KernelcheckError`) are printed as one line and
exit with status 2; nothing else is caught, so a bug still shows its traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib import import_module

from kernelcheck import __version__
from kernelcheck.errors import KernelcheckError

#: Command modules, in the order ``kernelcheck --help`` lists them.
COMMANDS = ("analyze", "bundle", "emulate", "graph", "inject", "list", "run")

EXIT_USAGE_OR_INPUT_ERROR = 2


def build_parser() -> argparse.ArgumentParser:
    """The top-level argument parser with every sub-command registered."""
    parser = argparse.ArgumentParser(
        prog="kernelcheck",
        description="Static and launch-time idempotency analysis of CUDA kernels.",
    )
    parser.add_argument("--version", action="version", version=f"kernelcheck {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        import_module(f"kernelcheck.commands.{name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE_OR_INPUT_ERROR
    try:
        return int(args.func(args) or 0)
    except KernelcheckError as error:
        print(f"kernelcheck: error: {error}", file=sys.stderr)
        return EXIT_USAGE_OR_INPUT_ERROR
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
