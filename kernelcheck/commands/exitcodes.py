"""The exit-code policy every ``kernelcheck`` sub-command shares.

One table, the convention of linters such as ruff and mypy, so a CI job can fail on a
finding without parsing any output:

====  ======================================================================================
code  meaning
====  ======================================================================================
0     nothing to report: the command did its work and no finding reached ``--fail-on``
1     findings at or above ``--fail-on`` (``analyze``, ``run``, ``inject``); a failed check
      (``selftest``)
2     usage error, unreadable or malformed input, or a failure of kernelcheck itself
130   interrupted (Ctrl-C); an output being written is completed and marked partial
====  ======================================================================================

``kernelcheck run`` returns the program's own exit status unless ``--fail-on`` triggers
(1) or kernelcheck itself fails (2).

A command adopts the policy with two calls: :func:`add_fail_on` when it builds its parser,
and :func:`findings_status` with what it found when it ends::

    add_fail_on(parser, ANALYZE_CLASSES)               # --fail-on never,not_proven
    ...
    return findings_status(classes_found, args.fail_on)  # 0 or 1

Errors are raised as :class:`~kernelcheck.errors.KernelcheckError` and turned into exit 2 by
:func:`kernelcheck.cli.main`; Ctrl-C becomes 130 there too.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Sequence

__all__ = ["EXIT_OK", "EXIT_FINDINGS", "EXIT_ERROR", "EXIT_INTERRUPTED", "EXIT_CODE_TABLE",
           "ANALYZE_CLASSES", "RUN_VERDICTS", "INJECT_OUTCOMES", "parse_fail_on",
           "add_fail_on", "findings_status"]

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_ERROR = 2
EXIT_INTERRUPTED = 130

#: The table as ``kernelcheck --help`` prints it (docs/user-guide.md has the same rows).
EXIT_CODE_TABLE = """\
exit status (every command):
  0    nothing to report (no finding reached --fail-on)
  1    findings at or above --fail-on (analyze, run, inject); a failed check (selftest)
  2    usage error, unreadable or malformed input, or kernelcheck's own failure
  130  interrupted (Ctrl-C); results written so far are kept, marked partial
  kernelcheck run returns the program's own status unless --fail-on triggers (1) or
  kernelcheck itself fails (2)."""

#: Kernel classes, what ``analyze --fail-on`` takes.
ANALYZE_CLASSES = ("always", "conditional", "never", "not_proven")
#: Instance verdicts, what ``run --fail-on`` takes.
RUN_VERDICTS = ("idempotent", "not_idempotent", "not_proven")
#: Trial outcomes (without and with recovery), what ``inject --fail-on`` takes.
INJECT_OUTCOMES = ("masked", "SDC", "DUE", "recovered", "unrecovered")

#: ``--fail-on none``: report, never fail (the default).
_NONE = "none"


def parse_fail_on(text: str, kinds: Sequence[str]) -> frozenset[str]:
    """The set of finding kinds ``--fail-on TEXT`` names.

    ``TEXT`` is a comma-separated list of ``kinds``, ``any`` (every kind but the first,
    which is always the harmless one: ``always``, ``idempotent``, ``masked``) or ``none``.

    Examples
    --------
    >>> sorted(parse_fail_on("never,not_proven", ANALYZE_CLASSES))
    ['never', 'not_proven']
    >>> sorted(parse_fail_on("any", RUN_VERDICTS))
    ['not_idempotent', 'not_proven']
    >>> parse_fail_on("none", RUN_VERDICTS)
    frozenset()
    """
    chosen: set[str] = set()
    for word in (w.strip() for w in text.split(",")):
        if not word:
            continue
        if word == _NONE:
            continue
        if word == "any":
            chosen.update(kinds[1:])
            continue
        if word not in kinds:
            raise argparse.ArgumentTypeError(
                f"unknown kind {word!r} (expected a comma-separated list of "
                f"{', '.join(kinds)}, or any, or none)")
        chosen.add(word)
    return frozenset(chosen)


def add_fail_on(parser: argparse.ArgumentParser, kinds: Sequence[str], what: str = "findings",
                example: str | None = None) -> None:
    """Add ``--fail-on KINDS`` to ``parser`` (default ``none``: report only, exit 0).

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The sub-command's parser.
    kinds : sequence of str
        The finding kinds the command reports, the harmless one first.
    what : str
        What the kinds are, for the help text ("kernel classes", "verdicts").
    example : str, optional
        A typical value for the help text.
    """
    example = example or ",".join(kinds[-2:])
    parser.add_argument(
        "--fail-on", metavar="KINDS", default=frozenset(),
        type=lambda text: parse_fail_on(text, kinds),
        help=f"exit with status 1 when any of these {what} is found: a comma-separated list "
             f"of {', '.join(kinds)}, 'any' or 'none' (e.g. --fail-on {example}; "
             f"default: none, report only)")


def findings_status(found: Iterable[str], fail_on: Iterable[str]) -> int:
    """:data:`EXIT_FINDINGS` when a kind in ``found`` is in ``fail_on``, else :data:`EXIT_OK`.

    Examples
    --------
    >>> findings_status(["always", "never"], {"never"})
    1
    >>> findings_status(["always", "conditional"], {"never", "not_proven"})
    0
    """
    wanted = frozenset(fail_on)
    return EXIT_FINDINGS if any(kind in wanted for kind in found) else EXIT_OK
