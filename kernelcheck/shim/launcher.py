"""``kernelcheck run``: run a command under the shim, with the analysis helper beside it.

:func:`run_command` prepares everything the shim needs before the program starts (the
library built and loadable, ``libsqlite3.so.0``, a private cache, the driver: the system's or
the stand-in), starts the helper, runs the command with ``LD_PRELOAD``, and returns the
command's exit status unchanged (128 + signal number when a signal ended it, as a shell
reports it).

A program never runs unchecked without saying so: when anything of that preparation fails,
:class:`RunSetupError` is raised (``kernelcheck run`` exits 2 with its one line) unless the
caller allows an unchecked run, which is then announced in one line on stderr.

At exit, the launches that came before their kernel's analysis was ready get a verdict: the
helper goes on analysing for up to ``analysis_wait`` seconds, and the report decides them
from the cache (:mod:`kernelcheck.shim.report`).
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from kernelcheck.errors import KernelcheckError
from kernelcheck.shim.report import RunReport, format_report, pending_kernels, read_reports

__all__ = ["RunResult", "RunSetupError", "run_command", "shim_environment", "prepare",
           "DEFAULT_ANALYSIS_WAIT"]

#: Seconds ``kernelcheck run`` waits at exit for the analysis of kernels first seen.
DEFAULT_ANALYSIS_WAIT = 30.0


class RunSetupError(KernelcheckError):
    """The program cannot be run under the shim (the message says why and what to do)."""


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


@dataclass(frozen=True, slots=True)
class _Prepared:
    library: Path
    cache: object
    directory: Path
    env: dict[str, str]


def _check_loadable(library: Path) -> None:
    try:
        ctypes.CDLL(str(library), mode=ctypes.RTLD_LOCAL)
    except OSError as error:
        raise RunSetupError(f"the interception library {library} cannot be loaded: {error}; "
                            f"remove {library.parent} to rebuild it") from error
    try:
        ctypes.CDLL("libsqlite3.so.0", mode=ctypes.RTLD_LOCAL)
    except OSError as error:
        raise RunSetupError("libsqlite3.so.0 not found: the interception library reads the "
                            "analysis cache with it; install it (Debian/Ubuntu: apt install "
                            "libsqlite3-0)") from error


def prepare(base: Mapping[str, str], driver: str = "auto",
            say=lambda line: print(f"kernelcheck: {line}", file=sys.stderr)) -> _Prepared:
    """Build and check the library, open the cache, choose the driver; raise on failure.

    Raises
    ------
    RunSetupError
        With one line saying what is wrong and what to do.
    """
    from kernelcheck.cache import AnalysisCache, cache_dir
    from kernelcheck.shim.build import preload_library
    from kernelcheck.shim.driver_choice import driver_environment

    try:
        library = preload_library()
    except KernelcheckError as error:
        raise RunSetupError(str(error)) from error
    _check_loadable(library)
    directory = Path(base["KERNELCHECK_CACHE_DIR"]) if base.get("KERNELCHECK_CACHE_DIR") \
        else cache_dir()
    try:
        cache = AnalysisCache(directory)
    except (KernelcheckError, OSError) as error:
        raise RunSetupError(f"the analysis cache cannot be used: {error}") from error
    try:
        env, line, news = driver_environment(driver, base)
    except KernelcheckError as error:
        cache.close()
        raise RunSetupError(str(error)) from error
    if news:
        say(line)
    return _Prepared(library, cache, directory, env)


def _start_helper(cache_directory: Path, env: Mapping[str, str]):
    helper_env = {k: v for k, v in env.items() if not k.startswith("KERNELCHECK_SHIM")}
    helper_env.pop("LD_PRELOAD", None)
    return subprocess.Popen([sys.executable, "-m", "kernelcheck.shim.helper", "--cache-dir",
                             str(cache_directory), "--parent", str(os.getpid())],
                            env=helper_env, stdin=subprocess.DEVNULL)


def _analysed(cache, key) -> bool:
    digest, arch, name = key
    if cache.get(digest, name, arch) is not None:
        return True
    status = cache.image_status(digest, arch)
    return status is not None and status[0] == "failed"


def _wait_for_analysis(report_dir: Path, cache, helper_process, seconds: float,
                       quiet: bool) -> None:
    """Give the helper up to ``seconds`` to analyse the kernels seen without analysis."""
    pending = {key for key in pending_kernels(report_dir) if not _analysed(cache, key)}
    if not pending or seconds <= 0 or helper_process is None:
        return
    if helper_process.poll() is not None:
        return
    if not quiet:
        kernels = "kernel" if len(pending) == 1 else "kernels"
        print(f"kernelcheck: waiting up to {seconds:g} s for the analysis of {len(pending)} "
              f"{kernels} first seen in this run (--analysis-wait)", file=sys.stderr)
    deadline = time.monotonic() + seconds
    while pending and time.monotonic() < deadline and helper_process.poll() is None:
        time.sleep(0.05)
        pending = {key for key in pending if not _analysed(cache, key)}


def run_command(command: Sequence[str], *, log: str | None = None, helper: bool = True,
                env: Mapping[str, str] | None = None, quiet: bool = False,
                analysis_wait: float = DEFAULT_ANALYSIS_WAIT, allow_unchecked: bool = False,
                driver: str = "auto") -> RunResult:
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
    analysis_wait : float
        Seconds to wait at exit for the analysis of kernels first seen in this run.
    allow_unchecked : bool
        When the shim cannot be used, run the program without it (saying so) instead of
        raising :class:`RunSetupError`.
    driver : str
        ``auto``, ``system`` or ``standin`` (:mod:`kernelcheck.shim.driver_choice`).

    Raises
    ------
    RunSetupError
        The shim cannot be used and ``allow_unchecked`` is false; the program did not run.
    """
    base = dict(os.environ if env is None else env)
    try:
        prepared = prepare(base, driver)
    except RunSetupError as error:
        if not allow_unchecked:
            raise
        line = f"running the program UNCHECKED (--allow-unchecked): {error}"
        print(f"kernelcheck: warning: {line}", file=sys.stderr)
        return RunResult(_run(command, base), None, (line,))
    cache = prepared.cache
    report_dir = Path(tempfile.mkdtemp(prefix="kernelcheck-run-"))
    try:
        run_env = shim_environment(prepared.env, prepared.library, prepared.directory,
                                   report_dir, log)
        helper_process = _start_helper(prepared.directory, run_env) if helper else None
        try:
            status = _run(command, run_env)
            _wait_for_analysis(report_dir, cache, helper_process, analysis_wait, quiet)
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
        cache.close()
    if not quiet:
        print(format_report(report), file=sys.stderr)
    return RunResult(status, report)


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
