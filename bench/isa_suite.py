"""Tracking suite: run PTX test kernels with known outputs through ``kernelcheck emulate``.

Run: python bench/isa_suite.py [DIR] [--zluda DIR] [-j N] [--json FILE]

Without arguments it runs bench/isa_suite/: small single-thread and single-warp kernels written
from the PTX ISA's text, each ``NAME.ptx`` with ``NAME.launch.json`` holding the expected
outputs. ``--zluda DIR`` runs a ZLUDA test directory as it is (``ptx/src/test/spirv_run`` of a
checkout of github.com/vosen/ZLUDA, which is not part of this repository): the launches and
expected outputs come from its mod.rs (bench/zluda_tests.py).

Every test ends in one of: passed, wrong value (an output differs), unsupported (the
emulator names a construct it lacks, at file:line:col), parse error (the PTX front end rejects
the file), kernel fault (the kernel itself fails on the emulator, in one line: an access out
of bounds, a trap), crashed (a traceback, a timeout or any other ending), or no expected
output (ZLUDA tests that only check compilation). The report lists the failures by
cause; ``--json`` writes every result.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.zluda_tests import launch_document, read_mod_rs  # noqa: E402

SUITE = ROOT / "bench" / "isa_suite"
STATUSES = ("passed", "wrong value", "unsupported", "parse error", "kernel fault", "crashed",
            "no expected output")
_UNSUPPORTED = re.compile(r"kernelcheck: error: (?P<where>\S+:\d+:\d+): unsupported: (?P<what>.*)")
_LOCATED = re.compile(r"kernelcheck: error: (?P<file>[^:\s]+\.ptx):(?P<line>\d+):(?P<col>\d+): "
                      r"(?P<message>.*)")


@dataclass(frozen=True)
class Result:
    name: str
    status: str
    detail: str = ""


def classify(name: str, returncode: int, stdout: str, stderr: str) -> Result:
    """The outcome of one ``kernelcheck emulate`` run (see its exit statuses)."""
    last = stderr.strip().splitlines()[-1] if stderr.strip() else ""
    if returncode == 0:
        return Result(name, "passed")
    if "Traceback (most recent call last)" in stderr:
        return Result(name, "crashed", last)
    if returncode == 1 and "kernel failed: " in last:
        return Result(name, "kernel fault", last.partition("kernel failed: ")[2])
    if returncode == 1:
        differing = [line.strip() for line in stdout.splitlines()
                     if line.startswith("  ") and "expected" in line]
        return Result(name, "wrong value", "; ".join(differing[:3]))
    match = _UNSUPPORTED.search(stderr)
    if match:
        return Result(name, "unsupported", f"{match['what']} at {match['where']}")
    match = _LOCATED.search(stderr)
    if match:
        where = f"{Path(match['file']).name}:{match['line']}:{match['col']}"
        return Result(name, "parse error", f"{where}: {match['message']}")
    return Result(name, "crashed", last or f"exit status {returncode}")


def emulate(name: str, ptx: Path, launch: Path, timeout: float) -> Result:
    command = [sys.executable, "-m", "kernelcheck.cli", "emulate", str(ptx), "--launch",
               str(launch), "--step-limit", "2000000"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                              cwd=ROOT)
    except subprocess.TimeoutExpired:
        return Result(name, "crashed", f"timed out after {timeout:.0f} s")
    return classify(name, done.returncode, done.stdout, done.stderr)


def suite_jobs(directory: Path) -> list[tuple[str, Path, Path]]:
    return [(launch.name.removesuffix(".launch.json"), launch.with_name(
        launch.name.removesuffix(".launch.json") + ".ptx"), launch)
        for launch in sorted(directory.glob("*.launch.json"))]


def zluda_jobs(directory: Path, scratch: Path) -> tuple[list, list[Result]]:
    """Launch files for the tests of a ZLUDA directory, and the results known without running."""
    from kernelcheck.errors import KernelcheckError
    from kernelcheck.ptx.parser import parse_ptx

    tests, problems = read_mod_rs(directory / "mod.rs")
    known = [Result(name, "crashed", f"test line not understood: {why}")
             for name, why in problems]
    jobs = []
    for test in tests:
        ptx = directory / f"{test.name}.ptx"
        if not ptx.exists():
            known.append(Result(test.name, "crashed", "no PTX file"))
            continue
        if test.outputs is None:
            known.append(Result(test.name, "no expected output"))
            continue
        params = 2
        try:
            module = parse_ptx(ptx.read_text(), str(ptx))
            kernel = module.get_function(test.name)
            params = len(kernel.params) if kernel is not None else 2
        except KernelcheckError:
            pass  # kernelcheck emulate reports the parse error itself
        launch = scratch / f"{test.name}.launch.json"
        launch.write_text(json.dumps(launch_document(test, params), indent=1))
        jobs.append((test.name, ptx, launch))
    return jobs, known


def report(title: str, results: list[Result]) -> str:
    counts = collections.Counter(r.status for r in results)
    run = [r for r in results if r.status != "no expected output"]
    passed = counts["passed"]
    lines = [f"## {title}", "",
             f"{len(run)} tests with expected outputs: {passed} passed "
             f"({100 * passed / max(len(run), 1):.1f}%)", ""]
    lines.append("| " + " | ".join(STATUSES) + " |")
    lines.append("|" + "---|" * len(STATUSES))
    lines.append("| " + " | ".join(str(counts[s]) for s in STATUSES) + " |")
    for status in STATUSES[1:-1]:
        failed = sorted((r for r in results if r.status == status), key=lambda r: r.name)
        if not failed:
            continue
        lines += ["", f"### {status} ({len(failed)})", ""]
        lines += [f"- `{r.name}`: {r.detail}" if r.detail else f"- `{r.name}`" for r in failed]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("suite", nargs="?", type=Path, default=SUITE,
                        help="directory of NAME.ptx + NAME.launch.json (default: bench/isa_suite)")
    parser.add_argument("--zluda", type=Path, metavar="DIR",
                        help="run a ZLUDA test directory (ptx/src/test/spirv_run) instead")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per test")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write every result here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        if args.zluda:
            jobs, results = zluda_jobs(args.zluda, Path(scratch))
            title = f"ZLUDA PTX tests in {args.zluda}"
        else:
            jobs, results = suite_jobs(args.suite), []
            shown = args.suite.relative_to(ROOT) if args.suite.is_relative_to(ROOT) else args.suite
            title = f"ISA tracking suite {shown}"
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            results += list(pool.map(lambda job: emulate(*job, args.timeout), jobs))
    results.sort(key=lambda r: r.name)
    print(report(title, results))
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in results], indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
