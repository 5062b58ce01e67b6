"""The ``kernelcheck`` command line: one sub-command per module in :mod:`kernelcheck.commands`.

Each command module exposes ``register(subparsers)``, which adds its parser and sets
``func`` to a function taking the parsed arguments and returning the exit code. The exit
codes are the table of :mod:`kernelcheck.commands.exitcodes`, the same for every command:
:func:`main` turns a usage error into two lines (the error and where help is) and exit
status 2, any :class:`~kernelcheck.errors.KernelcheckError` or unreadable input into one
line and 2, Ctrl-C into 130, and a fault of kernelcheck's own into one line naming it and
2 (``KERNELCHECK_TRACEBACK=1`` shows its traceback). No traceback reaches a user for bad
input.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from importlib import import_module

from kernelcheck import __version__
from kernelcheck.commands.common import HelpFormatter, Parser, UsageError
from kernelcheck.commands.exitcodes import (
    EXIT_CODE_TABLE,
    EXIT_ERROR,
    EXIT_INTERRUPTED,
)
from kernelcheck.errors import KernelcheckError

#: Command modules, in the order ``kernelcheck --help`` lists them.
COMMANDS = ("analyze", "bundle", "emulate", "graph", "inject", "list", "run", "selftest")

EXIT_USAGE_OR_INPUT_ERROR = EXIT_ERROR


def version_text() -> str:
    """What ``kernelcheck --version`` prints: the version, the CUDA driver a program run by
    ``kernelcheck run`` would get, and where the cache lives."""
    import platform

    from kernelcheck.cache.private import cache_dir, user_cache_dir
    from kernelcheck.shim.driver_choice import find_driver

    driver = find_driver()
    if driver.path is None:
        driver_line = ("none found (libcuda.so.1): `kernelcheck run` runs programs on the "
                       "stand-in driver (CPU emulator)")
    else:
        driver_line = driver.describe()
    return "\n".join([f"kernelcheck {__version__}",
                      f"python: {platform.python_version()} ({sys.executable})",
                      f"CUDA driver: {driver_line}",
                      f"analysis cache: {cache_dir()}",
                      f"built libraries and grammars: {user_cache_dir()}"])


class _VersionAction(argparse.Action):
    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS,
                 help=None):
        super().__init__(option_strings, dest, nargs=0, default=default, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(version_text())
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    """The top-level argument parser with every sub-command registered."""
    parser = Parser(
        prog="kernelcheck",
        description="Static and launch-time idempotency analysis of CUDA kernels.",
        epilog=EXIT_CODE_TABLE + "\n\nexample:\n  kernelcheck analyze build/ --format sarif "
               "-o kernelcheck.sarif --fail-on never,not_proven",
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--version", action=_VersionAction,
                        help="print the version, the CUDA driver in use and where the "
                             "cache lives, and exit")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND",
                                       parser_class=Parser)
    for name in COMMANDS:
        import_module(f"kernelcheck.commands.{name}").register(subparsers)
    return parser


def _one_line(error: BaseException) -> str:
    """An error's message on one line (a message never spans lines in this CLI)."""
    text = " ".join(str(error).split("\n")).strip()
    return text or type(error).__name__


def _say(line: str) -> None:
    try:
        print(line, file=sys.stderr)
    except (OSError, ValueError):  # stderr closed: nothing left to tell
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (the table in
    :mod:`kernelcheck.commands.exitcodes`)."""
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help()
            return EXIT_USAGE_OR_INPUT_ERROR
        return int(args.func(args) or 0)
    except UsageError as error:
        _say(f"kernelcheck: error: {_one_line(error)}")
        _say(error.usage_line())
        return EXIT_USAGE_OR_INPUT_ERROR
    except KernelcheckError as error:
        _say(f"kernelcheck: error: {_one_line(error)}")
        return EXIT_USAGE_OR_INPUT_ERROR
    except KeyboardInterrupt:
        _say("kernelcheck: interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (| head): stop quietly, as other command-line tools do.
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - keep the flush at exit quiet
        except OSError:
            pass
        return 0
    except SystemExit as stop:  # --help, --version
        code = stop.code
        return code if isinstance(code, int) else (0 if code is None else EXIT_ERROR)
    except OSError as error:
        where = f"{error.filename}: " if getattr(error, "filename", None) else ""
        _say(f"kernelcheck: error: {where}{error.strerror or _one_line(error)}")
        return EXIT_USAGE_OR_INPUT_ERROR
    except (MemoryError, RecursionError) as error:
        _say(f"kernelcheck: error: out of resources: {type(error).__name__}")
        return EXIT_USAGE_OR_INPUT_ERROR
    except Exception as error:  # noqa: BLE001 - a fault of kernelcheck's own: one line
        if os.environ.get("KERNELCHECK_TRACEBACK"):
            raise
        _say(f"kernelcheck: internal error: {type(error).__name__}: {_one_line(error)[:300]} "
             f"(a bug in kernelcheck; KERNELCHECK_TRACEBACK=1 shows where)")
        return EXIT_USAGE_OR_INPUT_ERROR


if __name__ == "__main__":
    sys.exit(main())
