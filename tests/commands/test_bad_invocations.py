"""Bad command lines and malformed inputs: one line (two for a usage error), exit status 2,
no traceback, nothing left behind; Ctrl-C during a campaign: a valid partial file, 130.

Each row of BAD is one thing a person or a CI job gets wrong. The command runs in-process
(``kernelcheck.cli.main``), in a scratch directory whose contents are compared before and
after.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from kernelcheck.cli import main
from tests.commands.badinput import (
    CUBIN,
    PTX,
    host_elf_without_device_code,
    make_inputs,
    snapshot,
    stdin_bytes,
)

F = str(PTX)
I4 = "p0=0x7f0000000000,p1=0x7f0000001000,p2=0x7f0000002000"
ROOT = os.geteuid() == 0

#: (id, argv with {placeholders}, a word the error line must contain)
BAD = [
    ("unknown-subcommand", ["bogus"], "invalid choice"),
    ("no-subcommand-option", ["--bogus"], "unrecognized"),
    ("analyze-missing-file", ["analyze", "{missing_dir}/k.ptx"], "no such file"),
    ("analyze-empty-file", ["analyze", "{empty}"], "empty.ptx"),
    ("analyze-truncated-ptx", ["analyze", "{truncated_ptx}"], "truncated.ptx"),
    ("analyze-truncated-cubin", ["analyze", "{truncated_cubin}"], "truncated.cubin"),
    ("analyze-truncated-fatbin", ["analyze", "{truncated_fatbin}"], "truncated.fatbin"),
    ("analyze-random-bytes", ["analyze", "{random}"], "random.bin"),
    ("analyze-host-elf-without-device-code", ["analyze", "{host_elf}"], "no device image"),
    ("analyze-directory-without-device-code", ["analyze", "{nodevice_dir}"], "no PTX"),
    ("analyze-unknown-kernel", ["analyze", F, "--kernel", "nope"], "no kernel matches"),
    ("instance-non-hex", ["analyze", F, "--kernel", "vec_add", "--instance",
                          "p0=0xzz,p1=1,p2=2,p3=3"], "malformed value"),
    ("instance-5000-digits", ["analyze", F, "--kernel", "vec_add", "--instance",
                              f"p0=0x{'f' * 5000},p1=1,p2=2,p3=3"], "characters"),
    ("instance-too-large", ["analyze", F, "--kernel", "vec_add", "--instance",
                            f"p0=0x{'f' * 40},p1=1,p2=2,p3=3"], "does not fit"),
    ("instance-float-for-integer", ["analyze", F, "--kernel", "vec_add", "--instance",
                                    f"{I4},p3=1.5"], "integer"),
    ("instance-missing-parameter", ["analyze", F, "--kernel", "vec_add", "--instance",
                                    "p0=1"], "no value for"),
    ("instance-without-kernel", ["analyze", F, "--instance", f"{I4},p3=4"], "--kernel"),
    ("grid-zero", ["analyze", F, "--kernel", "vec_add", "--instance", f"{I4},p3=4",
                   "--grid", "0"], "--grid"),
    ("grid-past-2^31", ["analyze", F, "--kernel", "vec_add", "--instance", f"{I4},p3=4",
                        "--grid", "2147483648"], "limit"),
    ("block-past-1024", ["analyze", F, "--kernel", "vec_add", "--instance", f"{I4},p3=4",
                         "--block", "1025"], "limit"),
    ("block-2048-threads", ["analyze", F, "--kernel", "vec_add", "--instance", f"{I4},p3=4",
                            "--block", "32,32,2"], "threads"),
    ("malformed-allocations", ["analyze", F, "--kernel", "vec_add", "--instance",
                               f"{I4},p3=4", "--allocations", "zz:10"], "allocation"),
    ("allocations-without-instance", ["analyze", F, "--allocations", "0x10:4"],
     "--instance"),
    ("bogus-format", ["analyze", F, "--format", "xml"], "invalid choice"),
    ("kernel-timeout-zero", ["analyze", F, "--kernel-timeout", "0"], "positive"),
    ("kernel-timeout-negative", ["analyze", F, "--kernel-timeout", "-1.5"], "positive"),
    ("kernel-timeout-word", ["analyze", F, "--kernel-timeout", "abc"], "seconds"),
    ("kernel-timeout-nan", ["analyze", F, "--kernel-timeout", "nan"], "seconds"),
    ("kernel-timeout-with-warm-cache", ["analyze", "--warm-cache", F, "--kernel-timeout",
                                        "5"], "--warm-cache"),
    ("bogus-fail-on", ["analyze", F, "--fail-on", "sometimes"], "unknown kind"),
    ("jobs-zero", ["analyze", F, "--format", "jsonl", "--jobs", "0"], "positive"),
    ("output-in-missing-dir", ["analyze", F, "-o", "{missing_dir}/r.txt"], "does not exist"),
    ("output-under-a-file", ["analyze", F, "--format", "json", "-o", "{blocker}/r.json"],
     "not a directory"),
    ("output-is-a-directory", ["analyze", F, "--format", "sarif", "-o", "{tmp}"],
     "directory"),
    ("output-on-read-only-fs", ["analyze", F, "--format", "sarif", "-o",
                                "/proc/kernelcheck.sarif"], "/proc/kernelcheck.sarif"),
    ("jsonl-alias-in-missing-dir", ["analyze", "--jsonl", "{missing_dir}/k.jsonl", F],
     "does not exist"),
    ("plot-in-missing-dir", ["analyze", F, "--plot", "{missing_dir}/p.png"],
     "does not exist"),
    ("regions-on-sass-only", ["analyze", str(CUBIN), "--regions"], "needs PTX"),
    ("graph-on-sass-only", ["graph", str(CUBIN)], "only SASS"),
    ("graph-unknown-kernel", ["graph", F, "--kernel", "nope"], "no kernel or function"),
    ("list-missing-file", ["list", "{missing_dir}/x.cubin"], "no such file"),
    ("list-directory-without-device-code", ["list", "{nodevice_dir}"], "no PTX"),
    ("list-truncated-fatbin", ["list", "{truncated_fatbin}"], "could not be read"),
    ("list-host-elf-without-device-code", ["list", "{host_elf}"], "no device image"),
    ("inject-bogus-groups", ["inject", "saxpy", "--groups", "bogus", "--trials", "2",
                             "-o", "{tmp}/c"], "unknown group"),
    ("inject-negative-trials", ["inject", "saxpy", "--trials", "-3"], "positive"),
    ("inject-zero-trials", ["inject", "saxpy", "--trials", "0"], "positive"),
    ("inject-jobs-zero", ["inject", "saxpy", "--jobs", "0"], "positive"),
    ("inject-negative-seed", ["inject", "saxpy", "--seed", "-1"], "--seed"),
    ("inject-unknown-target", ["inject", "no_such_kernel", "-o", "{tmp}/c"],
     "not a PTX file"),
    ("inject-output-in-missing-dir", ["inject", "saxpy", "--trials", "2", "-o",
                                      "{missing_dir}/c"], "does not exist"),
    ("run-without-command", ["run"], "no command"),
    ("run-output-in-missing-dir", ["run", "-o", "{missing_dir}/r.json", "--", "true"],
     "does not exist"),
    ("run-report-alias-in-missing-dir", ["run", "--report", "{missing_dir}/r.json", "--",
                                         "true"], "does not exist"),
    ("run-bogus-fail-on", ["run", "--fail-on", "sdc", "--", "true"], "unknown kind"),
    ("bundle-output-in-missing-dir", ["bundle", "create", "-o", "{missing_dir}/b.kcb", F],
     "does not exist"),
    ("bundle-truncated-fatbin", ["bundle", "create", "-o", "{tmp}/b.kcb",
                                 "{truncated_fatbin}"], "fatbin declares"),
    ("bundle-info-random-bytes", ["bundle", "info", "{random}"], "random.bin"),
]


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    files = make_inputs(tmp_path)
    monkeypatch.chdir(tmp_path)
    places = {k: str(v) for k, v in files.items()}
    places.update(tmp=str(tmp_path), host_elf=str(host_elf_without_device_code()))
    return tmp_path, places


def _check(status: int, err: str) -> None:
    assert status == 2, err
    assert "Traceback" not in err and "internal error" not in err, err
    lines = err.strip().splitlines()
    assert 1 <= len(lines) <= 2, err
    assert lines[0].startswith("kernelcheck: error: "), err


@pytest.mark.parametrize(("argv", "word"), [pytest.param(a, w, id=i) for i, a, w in BAD])
def test_bad_invocation_is_one_line_exit_2_nothing_left(argv, word, scratch, capsys):
    root, places = scratch
    before = snapshot(root)
    status = main([a.format(**places) for a in argv])
    err = capsys.readouterr().err
    _check(status, err)
    assert word in err, err
    assert snapshot(root) == before


def test_stdin_that_is_empty_or_random(scratch, capsys, monkeypatch):
    for data in (b"", b"\x00\x01garbage" * 50):
        monkeypatch.setattr(sys, "stdin", stdin_bytes(data))
        status = main(["analyze", "-"])
        _check(status, capsys.readouterr().err)


def test_cache_directory_that_is_a_file(scratch, capsys, monkeypatch):
    root, places = scratch
    monkeypatch.setenv("KERNELCHECK_CACHE_DIR", places["blocker"])
    status = main(["analyze", "--warm-cache", F])
    err = capsys.readouterr().err
    _check(status, err)
    assert "not a directory" in err


@pytest.mark.skipif(ROOT, reason="root writes read-only files")
def test_read_only_output_file(scratch, capsys):
    root, _ = scratch
    target = root / "report.sarif"
    target.write_text("old\n")
    target.chmod(0o444)
    status = main(["analyze", F, "--format", "sarif", "-o", str(target)])
    _check(status, capsys.readouterr().err)
    assert target.read_text() == "old\n"


def test_sigint_during_a_campaign_writes_a_valid_partial_file(tmp_path):
    """Ctrl-C: exit status 130, and STEM.json/STEM.csv hold the trials done, marked."""
    # As at a terminal: Ctrl-C not ignored. A test run started in the background of a
    # non-interactive shell (or under nohup) has SIGINT ignored, and a child keeps that.
    process = subprocess.Popen(
        [sys.executable, "-m", "kernelcheck", "inject", "saxpy", "--trials", "1000000",
         "--recover", "-o", "campaign", "--no-figure"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    try:
        # Interrupt once trials are running (the campaign prints nothing before it ends).
        time.sleep(6)
        assert process.poll() is None, process.communicate()
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=max(10, deadline - time.monotonic()))
    finally:
        if process.poll() is None:  # a failed test leaves no campaign running
            process.kill()
            process.communicate()
    assert process.returncode == 130, err
    assert "Traceback" not in err
    document = json.loads((tmp_path / "campaign.json").read_text())
    assert document["partial"] is True
    assert 0 < len(document["trials"]) <= document["trials_completed"] < 1000000
    rows = (tmp_path / "campaign.csv").read_text().splitlines()
    assert len(rows) == len(document["trials"]) + 1
    assert "partial" in out and "interrupted" in err
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]
