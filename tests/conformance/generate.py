"""Write the generated sweep cases (tests/conformance/sweep.py) under cases/.

    python -m tests.conformance.generate            # write every sweep's .ptx and launch file
    python -m tests.conformance.generate --check    # exit 1 when a written file is stale
    python -m tests.conformance.generate --ptxas    # also assemble every kernel with ptxas,
                                                    # and the not_ptx rules' probes

The sweeps are defined by the reference modules (tests/conformance/reference/gen_*.py), next
to the functions that check them. ``--ptxas`` needs the CUDA toolkit's ``ptxas`` and confirms
that every generated kernel is PTX the toolkit accepts for its target; the tests need neither.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.conformance.harness import CASES, load_references
from tests.conformance.sweep import GENERATED, SWEEPS, Sweep


def files(sweep: Sweep) -> dict[Path, str]:
    """The files of one sweep and their contents."""
    folder = CASES / sweep.group
    return {folder / f"{sweep.name}.ptx": sweep.ptx(),
            folder / f"{sweep.name}.launch.json": sweep.launch()}


def expected_files() -> dict[Path, str]:
    load_references()
    out: dict[Path, str] = {}
    for sweep in SWEEPS.values():
        out |= files(sweep)
    return out


def stale_files() -> list[str]:
    """Generated files that differ from what the sweeps give, are missing, or were left
    behind by a sweep that no longer exists."""
    wanted = expected_files()
    problems = [f"{path.relative_to(CASES)}: out of date" for path, text in wanted.items()
                if not path.exists() or path.read_text() != text]
    for path in sorted(CASES.glob("*/*")):
        if path not in wanted and path.is_file() and _is_generated(path):
            problems.append(f"{path.relative_to(CASES)}: no sweep writes it any more")
    return problems


def _is_generated(path: Path) -> bool:
    with path.open() as handle:
        head = handle.read(4096)
    return GENERATED in head


def write() -> int:
    wanted = expected_files()
    for path, text in wanted.items():
        if not path.exists() or path.read_text() != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    for path in sorted(CASES.glob("*/*")):
        if path not in wanted and path.is_file() and _is_generated(path):
            path.unlink()
    return len(wanted) // 2


def assemble(ptxas: str) -> list[str]:
    """Every sweep's kernel through ptxas for its target; the errors."""
    load_references()
    errors = []
    with tempfile.TemporaryDirectory() as tmp:
        for sweep in SWEEPS.values():
            source = Path(tmp) / f"{sweep.name}.ptx"
            source.write_text(sweep.ptx())
            arch = sweep.target.split(",")[0].strip()
            result = subprocess.run([ptxas, f"-arch={arch}", str(source), "-o",
                                     str(Path(tmp) / "out.cubin")],
                                    capture_output=True, text=True, check=False)
            if result.returncode:
                errors.append(f"{sweep.case_id}:\n{result.stderr.strip()}")
    return errors


_PROBE_KERNEL = """.version 9.0
.target {target}
.address_size 64
.visible .entry probe(.param .u64 out)
{{
    .reg .pred %p<4>;
    .reg .b8 %b<4>;
    .reg .b16 %h<4>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd2, [out];
    ld.global.b32 %r0, [%rd2];
    ld.global.b32 %r1, [%rd2+4];
    ld.global.b64 %rd0, [%rd2+8];
    ld.global.b64 %rd1, [%rd2+16];
    ld.global.b16 %h0, [%rd2+24];
    ld.global.b16 %h1, [%rd2+26];
    ld.global.b8 %b0, [%rd2+28];
    setp.ne.b32 %p0, %r0, 0;
    {instruction}
    st.global.b32 [%rd2], %r3;
    st.global.b64 [%rd2], %rd3;
    st.global.b16 [%rd2], %h3;
    st.global.b8 [%rd2], %b3;
    ret;
}}
"""


def check_rules(ptxas: str) -> list[str]:
    """Every probe of the not_ptx rules must be rejected by ptxas; a probe's kernel without
    the probe must assemble (so the rejection is the probe's)."""
    from tests.conformance.not_ptx import RULES

    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        def assembles(text: str, target: str) -> bool:
            source = Path(tmp) / "probe.ptx"
            source.write_text(text)
            result = subprocess.run([ptxas, f"-arch={target}", str(source), "-o",
                                     str(Path(tmp) / "probe.cubin")],
                                    capture_output=True, text=True, check=False)
            return result.returncode == 0

        for rule in RULES:
            if not assembles(_PROBE_KERNEL.format(target=rule.target, instruction=""),
                             rule.target):
                problems.append(f"the probe kernel does not assemble for {rule.target}")
            for probe in rule.probes:
                text = _PROBE_KERNEL.format(target=rule.target, instruction=probe)
                if assembles(text, rule.target):
                    problems.append(f"ptxas accepts {probe!r}, which a rule calls invalid: "
                                    f"{rule.why}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="report stale files, write none")
    parser.add_argument("--ptxas", action="store_true", help="assemble every kernel with ptxas")
    args = parser.parse_args(argv)
    if args.check:
        problems = stale_files()
        for problem in problems:
            print(problem)
        return 1 if problems else 0
    count = write()
    print(f"{count} sweep cases written under {CASES}")
    if args.ptxas:
        ptxas = shutil.which("ptxas")
        if ptxas is None:
            print("ptxas not found", file=sys.stderr)
            return 2
        errors = assemble(ptxas) + check_rules(ptxas)
        for error in errors:
            print(error, file=sys.stderr)
        return 1 if errors else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
