"""Prepare, on a machine with PyPI access, what a GPU machine without network needs to run
``kernelcheck selftest --device``.

Run: ``python scripts/offline_bundle.py --out BUNDLE [--python-version 3.12] [--skip NAME]
[--cuda-bindings SPEC] [--limit-mib 64] [--dry-run]``

The bundle directory holds:

* ``wheelhouse/``: binary wheels of kernelcheck's runtime dependencies (``[project]
  dependencies`` of pyproject.toml) for the target Python and ``manylinux`` x86-64, fetched
  with ``pip download --only-binary=:all: --python-version X.Y --platform ...``; torch and
  the NVIDIA driver are not in it (the GPU machine has its own), nor any package named with
  ``--skip`` (taken from the GPU machine as it is). The wheelhouse must stay within
  ``--limit-mib`` (64 MiB by default), or the script fails naming the largest wheels;
* ``kernelcheck-*.whl``: the project itself, built with ``pip wheel --no-deps``;
* ``fixtures/``: the parts of the fixture corpus the self-test reads (expected.toml, ptx/,
  cubin/), and ``tests/conformance/cases/``: the conformance suite's launch files, which the
  self-test's emulator section also runs on the device;
* ``run_selftest.sh``: installs from the wheelhouse with ``pip install --no-index`` and runs
  the self-test, as one command.

On the GPU machine: ``sh BUNDLE/run_selftest.sh`` (extra arguments go to ``kernelcheck
selftest``; ``PYTHON=...`` picks the interpreter). docs/selftest.md has the steps.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Platform tags pip may pick wheels for: glibc 2.28 or newer (Debian 10, Ubuntu 18.10, RHEL 8
#: and later). pip takes each tag literally, so a wheel tagged only ``manylinux_2_27`` (a
#: larger z3-solver build) is passed over for one tagged ``manylinux_2_17``.
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64")
DEFAULT_LIMIT_MIB = 64
#: What the fixture corpus contributes to the bundle (the self-test reads nothing else).
FIXTURE_PARTS = ("expected.toml", "ptx", "cubin")

RUN_SCRIPT = """#!/bin/sh
# Install kernelcheck from this bundle without network, then run its self-test on the GPU.
# Extra arguments go to `kernelcheck selftest` (e.g. --quick); PYTHON picks the interpreter.
set -e
cd "$(dirname "$0")"
PY=${PYTHON:-python3}
"$PY" -m pip install --no-index --find-links wheelhouse --find-links . kernelcheck
exec "$PY" -m kernelcheck selftest --device --fixtures fixtures -o selftest-report.json "$@"
"""


def _name(requirement: str) -> str:
    return re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def runtime_requirements(pyproject: Path, skip: Sequence[str] = (),
                         cuda_bindings: str | None = None) -> list[str]:
    """The ``[project] dependencies`` of ``pyproject``, less ``skip`` (names), with the
    ``cuda-bindings`` requirement replaced by ``cuda_bindings`` when given."""
    with open(pyproject, "rb") as handle:
        deps = tomllib.load(handle)["project"]["dependencies"]
    skipped = {s.lower().replace("_", "-") for s in skip}
    out = []
    for dep in deps:
        name = _name(dep)
        if name in skipped:
            continue
        out.append(cuda_bindings if name == "cuda-bindings" and cuda_bindings else dep)
    return out


def download_command(requirements: Sequence[str], dest: Path, python_version: str,
                     platforms: Sequence[str] = PLATFORMS) -> list[str]:
    """The ``pip download`` of binary wheels for another Python version and platform."""
    cmd = [sys.executable, "-m", "pip", "download", "--only-binary=:all:",
           "--python-version", python_version, "--implementation", "cp", "-d", str(dest)]
    for platform in platforms:
        cmd += ["--platform", platform]
    return cmd + list(requirements)


def wheel_command(project: Path, dest: Path) -> list[str]:
    """The build of the project's own wheel (pure Python: any Python 3.11+ installs it)."""
    return [sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(dest), str(project)]


def directory_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def build_bundle(out: Path, *, python_version: str = "3.12", skip: Sequence[str] = (),
                 cuda_bindings: str | None = None, limit_mib: float = DEFAULT_LIMIT_MIB,
                 project: Path = ROOT,
                 run: Callable[[list[str]], None] | None = None) -> dict:
    """Build the bundle in ``out`` (see the module docs); returns its sizes in bytes.

    ``run(cmd)`` executes a command (default: ``subprocess.run(cmd, check=True)``).

    Raises
    ------
    SystemExit
        The wheelhouse is larger than ``limit_mib``.
    """
    run = run or (lambda cmd: subprocess.run(cmd, check=True))
    wheelhouse = out / "wheelhouse"
    wheelhouse.mkdir(parents=True, exist_ok=True)
    requirements = runtime_requirements(project / "pyproject.toml", skip, cuda_bindings)
    run(download_command(requirements, wheelhouse, python_version))
    for stale in out.glob("kernelcheck-*.whl"):
        stale.unlink()
    run(wheel_command(project, out))
    fixtures = out / "fixtures"
    if fixtures.exists():
        shutil.rmtree(fixtures)
    fixtures.mkdir()
    for part in FIXTURE_PARTS:
        source = project / "fixtures" / part
        if source.is_dir():
            shutil.copytree(source, fixtures / part)
        else:
            shutil.copy2(source, fixtures / part)
    cases = out / "tests" / "conformance" / "cases"
    if cases.exists():
        shutil.rmtree(cases)
    if (project / "tests" / "conformance" / "cases").is_dir():
        shutil.copytree(project / "tests" / "conformance" / "cases", cases)
    script = out / "run_selftest.sh"
    script.write_text(RUN_SCRIPT)
    script.chmod(0o755)
    sizes = {"wheelhouse": directory_bytes(wheelhouse),
             "project": sum(p.stat().st_size for p in out.glob("kernelcheck-*.whl")),
             "fixtures": directory_bytes(fixtures) + (directory_bytes(cases)
                                                       if cases.exists() else 0),
             "wheels": sorted(((p.name, p.stat().st_size) for p in wheelhouse.glob("*.whl")),
                              key=lambda x: -x[1])}
    if sizes["wheelhouse"] > limit_mib * (1 << 20):
        largest = ", ".join(f"{n} ({s / (1 << 20):.1f} MiB)" for n, s in sizes["wheels"][:3])
        raise SystemExit(f"offline_bundle: the wheelhouse is "
                         f"{sizes['wheelhouse'] / (1 << 20):.1f} MiB, over the limit of "
                         f"{limit_mib} MiB; largest: {largest}. Leave out what the GPU "
                         f"machine already has with --skip NAME (numpy, networkx come with "
                         f"most PyTorch installs)")
    return sizes


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, type=Path, help="the bundle directory")
    parser.add_argument("--python-version", default="3.12",
                        help="the GPU machine's Python (default %(default)s)")
    parser.add_argument("--skip", action="append", default=[], metavar="NAME",
                        help="a dependency the GPU machine already has (repeatable)")
    parser.add_argument("--cuda-bindings", metavar="SPEC",
                        help="the cuda-bindings requirement to fetch instead of the "
                             "project's, matching the GPU machine's driver (e.g. "
                             "'cuda-bindings>=12.8,<13' for a CUDA 12 driver)")
    parser.add_argument("--limit-mib", type=float, default=DEFAULT_LIMIT_MIB)
    parser.add_argument("--dry-run", action="store_true",
                        help="print the commands, build nothing")
    args = parser.parse_args(argv)
    if args.dry_run:
        reqs = runtime_requirements(ROOT / "pyproject.toml", args.skip, args.cuda_bindings)
        print(" ".join(download_command(reqs, args.out / "wheelhouse", args.python_version)))
        print(" ".join(wheel_command(ROOT, args.out)))
        return 0
    sizes = build_bundle(args.out, python_version=args.python_version, skip=args.skip,
                         cuda_bindings=args.cuda_bindings, limit_mib=args.limit_mib)
    mib = 1 << 20
    print(f"wheelhouse: {sizes['wheelhouse'] / mib:.1f} MiB in {len(sizes['wheels'])} wheels "
          f"(limit {args.limit_mib} MiB); project wheel {sizes['project'] / mib:.2f} MiB; "
          f"fixtures {sizes['fixtures'] / mib:.1f} MiB")
    for name, size in sizes["wheels"]:
        print(f"  {size / mib:6.1f} MiB  {name}")
    print(f"on the GPU machine: sh {args.out}/run_selftest.sh")
    return 0


if __name__ == "__main__":
    sys.exit(main())
