"""Property: whatever the command line and whatever the input files, kernelcheck answers
with an exit status of the table (0, 1, 2, 130), never a traceback, at most two lines on
stderr for an error, and leaves no output file behind when it fails.

Command lines are drawn from every sub-command with valid and invalid values of each of
their options, over good and malformed inputs (tests/commands/badinput.py). The commands run
in-process; the number of examples is bounded so the default suite stays quick.
"""

from __future__ import annotations

import contextlib
import io
import shutil
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernelcheck.cli import main
from tests.commands.badinput import (
    CUBIN,
    FATBIN,
    HOST,
    PTX,
    host_elf_without_device_code,
    make_inputs,
    snapshot,
    stdin_bytes,
)

EXIT_CODES = {0, 1, 2, 130}


@pytest.fixture(scope="module")
def places(tmp_path_factory):
    root = tmp_path_factory.mktemp("cli-properties")
    files = make_inputs(root)
    out = root / "out"
    out.mkdir()
    return root, {
        "good": [str(PTX), str(CUBIN), str(FATBIN), str(HOST)],
        "bad": [str(files[k]) for k in ("empty", "truncated_ptx", "truncated_cubin",
                                        "truncated_fatbin", "random", "nodevice_dir")]
        + [str(files["missing_dir"] / "k.ptx"), str(host_elf_without_device_code()), "-"],
        "outputs": [str(out / "report.out"), str(files["missing_dir"] / "r.out"),
                    str(files["blocker"] / "r.out"), str(out), "/proc/kernelcheck.out"],
        "out": out,
    }


def _choice(values):
    return st.sampled_from(values)


def _optional(flag: str, values) -> st.SearchStrategy[list[str]]:
    # Absent two times in three, so that a good share of command lines are valid.
    return st.one_of(st.just([]), st.just([]), _choice(values).map(lambda v: [flag, str(v)]))


_INSTANCE = ["p0=0x7f0000000000,p1=0x7f0000001000,p2=0x7f0000002000,p3=1024",
             "p0=0xzz,p1=1,p2=2,p3=3", f"p0=0x{'f' * 5000},p1=1,p2=2,p3=3",
             "p0=1,p1=2,p2=3,p3=4.5", "p0=1", "=", "p9=1"]
_DIMS = ["0", "1", "4", "4,2", "2147483648", "1025", "32,32,2", "1.5", "x", "1,1,1,1"]
_KERNELS = ["vec_add", "nope", "axpby<float>", "[", ".*", "saxpy", "_Z5axpbyIfEvPT_"]


@st.composite
def command_lines(draw, places):
    root, p = places
    files = p["good"] + p["bad"]
    command = draw(_choice(["analyze", "analyze", "analyze", "list", "graph", "inject",
                            "run", "bundle", "bogus", ""]))
    out = _optional("-o", p["outputs"])
    if command == "analyze":
        argv = ["analyze", *draw(st.lists(_choice(p["good"] + files), min_size=0,
                                          max_size=2))]
        argv += draw(_optional("--format", ["text", "json", "jsonl", "sarif", "xml"]))
        argv += draw(_optional("--kernel", _KERNELS)) + draw(out)
        argv += draw(_optional("--instance", _INSTANCE))
        argv += draw(_optional("--grid", _DIMS)) + draw(_optional("--block", _DIMS))
        argv += draw(_optional("--allocations", ["0x7f0000000000:4096", "zz:1", "0x10",
                                                 "0x10:-4"]))
        argv += draw(_optional("--jobs", ["0", "1", "-1", "x"]))
        argv += draw(_optional("--fail-on", ["never,not_proven", "any", "bogus"]))
        argv += draw(_optional("--arch", ["sm_90", "sm_12"]))
        return argv
    if command == "list":
        return ["list", *draw(st.lists(_choice(files), min_size=0, max_size=2)),
                *draw(_optional("--format", ["text", "json", "yaml"])), *draw(out)]
    if command == "graph":
        return ["graph", *draw(st.lists(_choice(files), min_size=0, max_size=1)),
                *draw(_optional("--kernel", _KERNELS)),
                *draw(_optional("--graph", ["cfg", "loops", "dataflow", "tree"])),
                *draw(_optional("--format", ["dot", "json", "png"])), *draw(out)]
    if command == "inject":
        return ["inject", draw(_choice(["saxpy", "no_such_kernel", str(PTX)] + p["bad"][:3])),
                *draw(_optional("--trials", ["-3", "0", "1", "2", "x"])),
                *draw(_optional("--groups", ["bogus", "G_GP", "G_FP32,G_LD", ","])),
                *draw(_optional("--jobs", ["0", "1"])),
                *draw(_optional("--seed", ["-1", "0", "x"])),
                *draw(_optional("--format", ["text", "jsonl", "sarif", "csv"])),
                "-o", draw(_choice([str(p["out"] / "campaign"),
                                    str(root / "missing-dir" / "c"),
                                    str(root / "a-file" / "c")])), "--no-figure"]
    if command == "run":
        argv = ["run", *draw(_optional("--fail-on", ["not_idempotent", "sdc"])),
                *draw(_optional("--format", ["json", "sarif", "yaml"])),
                *draw(_choice([["-o", str(root / "missing-dir" / "r")],
                               ["--report", str(root / "a-file" / "r")], []]))]
        return argv + draw(_choice([[], ["--"]]))
    if command == "bundle":
        return ["bundle", draw(_choice(["create", "info", "import", "pack"])),
                *draw(st.lists(_choice(p["bad"][:6]), min_size=0, max_size=1)),
                *draw(_choice([["-o", str(root / "missing-dir" / "b.kcb")],
                               ["-o", str(p["out"] / "b.kcb")], []]))]
    return [command] if command else []


def _run(argv: list[str], stdin: bytes) -> tuple[int, str]:
    err, out = io.StringIO(), io.StringIO()
    saved = sys.stdin
    sys.stdin = stdin_bytes(stdin)
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            status = main(argv)
    finally:
        sys.stdin = saved
    return status, err.getvalue()


@pytest.fixture(scope="module")
def drawn(places):
    return command_lines(places)


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture,
                                 HealthCheck.too_slow])
@given(data=st.data(), stdin=st.binary(max_size=64))
def test_every_command_line_ends_in_a_table_status_without_traceback(data, stdin, places,
                                                                      drawn):
    root, p = places
    argv = data.draw(drawn, label="argv")
    before = snapshot(root)
    status, err = _run(argv, stdin)
    assert status in EXIT_CODES, (argv, status, err)
    assert "Traceback" not in err and "internal error" not in err, (argv, err)
    if status == 2:
        assert len(err.strip().splitlines()) <= 2, (argv, err)
        assert snapshot(root) == before, (argv, err)
    for made in snapshot(root) - before:  # a successful run's outputs: cleared for the next
        path = root / made
        if path.is_file():
            path.unlink()
        elif path.is_dir() and path != p["out"]:
            shutil.rmtree(path, ignore_errors=True)
