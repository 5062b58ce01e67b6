"""What every sub-command's parser shares: one-line usage errors, defaults in ``--help``,
one spelling for output options, and argument types that reject bad values up front.

:class:`Parser` turns argparse's usage errors into :class:`UsageError` (exit status 2, one
line plus a pointer to ``--help``) instead of printing the whole usage block and exiting;
:class:`HelpFormatter` shows each option's default and keeps the examples of an epilog as
written.
"""

from __future__ import annotations

import argparse
import sys

from kernelcheck.errors import KernelcheckError

__all__ = ["UsageError", "Parser", "HelpFormatter", "positive_int", "positive_seconds",
           "add_output",
           "add_format", "add_quiet", "examples", "FORMATS"]

#: Machine and human output formats of analyze, run and inject.
FORMATS = ("text", "json", "jsonl", "sarif")


class UsageError(KernelcheckError):
    """A command line argparse refused: the message, and the command to ask for help."""

    def __init__(self, message: str, prog: str) -> None:
        self.prog = prog
        super().__init__(message)

    def usage_line(self) -> str:
        return f"usage: {self.prog} [options] (see '{self.prog} --help')"


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Epilogs kept as written (examples), and ``(default: X)`` after each option whose
    default is worth saying (not ``None``, ``False`` or an empty value)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if ("default" in text or default is argparse.SUPPRESS or default is None
                or default is False or default == () or default == frozenset()
                or default == [] or isinstance(action, argparse._HelpAction)):
            return text
        if action.option_strings or action.nargs in (argparse.OPTIONAL,
                                                     argparse.ZERO_OR_MORE):
            return f"{text} (default: %(default)s)"
        return text


class Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors raise :class:`UsageError` (exit status 2)."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str):  # type: ignore[override]
        raise UsageError(message, self.prog)


def positive_int(text: str) -> int:
    """An integer >= 1 (``--jobs``, ``--trials``)."""
    try:
        value = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def positive_seconds(text: str) -> float:
    """A finite number of seconds > 0 (``--kernel-timeout``)."""
    import math

    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got "
                                         f"{text!r}")
    return value


def add_output(parser: argparse.ArgumentParser, what: str, *, stem: bool = False) -> None:
    """``-o/--output FILE`` (``-`` or absent: standard output)."""
    if stem:
        parser.add_argument("-o", "--output", metavar="STEM",
                            help=f"write {what}")
        return
    parser.add_argument("-o", "--output", metavar="FILE",
                        help=f"write {what} to FILE instead of standard output (replaced only "
                             f"when complete)")


def add_format(parser: argparse.ArgumentParser, what: str, choices=FORMATS,
               default: str = "text") -> None:
    """``--format`` with one of ``choices``."""
    parser.add_argument("--format", choices=choices, default=default,
                        help=f"how {what} is written: {', '.join(choices)} "
                             f"(docs/user-guide.md, 'Use in CI')")


def add_quiet(parser: argparse.ArgumentParser) -> None:
    """``-q/--quiet``: no progress bar and no summary lines on stderr."""
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="no progress bar and no notes on standard error")


def examples(*lines: str) -> str:
    """An epilog of example command lines."""
    return "example:\n" + "\n".join(f"  {line}" for line in lines)


def stdout_is_output(output: str | None) -> bool:
    """Whether the report goes to standard output."""
    return output in (None, "-")


def say(text: str, quiet: bool = False) -> None:
    """A note on standard error (not with ``--quiet``)."""
    if not quiet:
        print(text, file=sys.stderr)
