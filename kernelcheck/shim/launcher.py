"""``kernelcheck run``: run a command under the shim, with the analysis helper beside it.

:func:`run_command` builds the shim if needed, prepares the cache, starts the helper, runs
the command with ``LD_PRELOAD`` and the shim's environment, waits, merges what the shim
counted, and returns the command's exit status unchanged (128 + signal number when a signal
ended it, as a shell reports it). If the shim cannot be built or the cache is not usable,
the command still runs, and the message says why.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from kernelcheck.shim.report import RunReport, format_report, read_reports

__all__ = ["RunResult", "run_command", "shim_environment"]


@dataclass(frozen=True, slots=True)
class RunResult:
    """The command's exit status and what the shim saw (``report`` is None without it)."""

    returncode: int
    report: RunReport | None
    problems: tuple[str, ...] = ()


def shim_environment(base: Mapping[str, str], library: Path, cache_directory: Path,
                     report_dir: Path, log: str | None = None) -> dict[str, str]:
    """``base`` plus what the shim reads (see log.c) and the library first in LD_PRELOAD."""
    from kernelcheck.cache import analyzer_version

    env = dict(base)
    preload = [str(library)] + [p for p in env.get("LD_PRELOAD", "").split(":") if p]
    env["LD_PRELOAD"] = ":".join(preload)
    env["KERNELCHECK_CACHE_DIR"] = str(cache_directory)
    env["KERNELCHECK_ANALYZER_VERSION"] = analyzer_version()
    env["KERNELCHECK_REPORT_DIR"] = str(report_dir)
    if log:
        env["KERNELCHECK_LOG"] = os.path.abspath(log)
    return env


def _start_helper(cache_directory: Path, env: Mapping[str, str]):
    helper_env = {k: v for k, v in env.items() if not k.startswith("KERNELCHECK_SHIM")}
    helper_env.pop("LD_PRELOAD", None)
    return subprocess.Popen([sys.executable, "-m", "kernelcheck.shim.helper", "--cache-dir",
                             str(cache_directory), "--parent", str(os.getpid())],
                            env=helper_env, stdin=subprocess.DEVNULL)


def run_command(command: Sequence[str], *, log: str | None = None, helper: bool = True,
                env: Mapping[str, str] | None = None, quiet: bool = False) -> RunResult:
    """Run ``command`` under the shim and return its status and the merged report.

    Parameters
    ----------
    command : sequence of str
        The program and its arguments.
    log : str, optional
        JSONL file receiving one line per kernel instance.
    helper : bool
        Start the analysis helper (without it, only cached analyses are used).
    env : mapping, optional
        The environment to run in (default ``os.environ``).
    quiet : bool
        Do not print the summary.
    """
    from kernelcheck.cache import AnalysisCache, cache_dir
    from kernelcheck.errors import KernelcheckError
    from kernelcheck.shim.build import preload_library

    base = dict(os.environ if env is None else env)
    problems: list[str] = []
    library = cache = None
    try:
        library = preload_library()
    except KernelcheckError as error:
        problems.append(f"the shim is not loaded, running the command without it: {error}")
    directory = Path(base["KERNELCHECK_CACHE_DIR"]) if base.get("KERNELCHECK_CACHE_DIR") \
        else cache_dir()
    if library is not None:
        try:
            cache = AnalysisCache(directory)
        except (KernelcheckError, OSError) as error:
            problems.append(f"analysis cache unusable, every instance counts as not "
                            f"proven: {error}")
    for problem in problems:
        print(f"kernelcheck: {problem}", file=sys.stderr)
    if library is None:
        return RunResult(_run(command, base), None, tuple(problems))
    report_dir = Path(tempfile.mkdtemp(prefix="kernelcheck-run-"))
    try:
        run_env = shim_environment(base, library, directory, report_dir, log)
        helper_process = _start_helper(directory, run_env) if helper and cache else None
        try:
            status = _run(command, run_env)
        finally:
            if helper_process is not None:
                helper_process.terminate()
                try:
                    helper_process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    helper_process.kill()
        report = read_reports(report_dir, cache)
    finally:
        shutil.rmtree(report_dir, ignore_errors=True)
        if cache is not None:
            cache.close()
    if not quiet:
        print(format_report(report), file=sys.stderr)
    return RunResult(status, report, tuple(problems))


def _run(command: Sequence[str], env: Mapping[str, str]) -> int:
    try:
        process = subprocess.Popen(list(command), env=dict(env))
    except OSError as error:
        print(f"kernelcheck: cannot run {command[0]}: {error.strerror}", file=sys.stderr)
        return 127 if isinstance(error, FileNotFoundError) else 126
    while True:
        try:
            status = process.wait()
            break
        except KeyboardInterrupt:  # the child got the SIGINT too; wait for it
            continue
    return 128 + -status if status < 0 and -status in signal.valid_signals() else status
