"""``kernelcheck analyze --kernel-timeout``: a kernel whose analysis runs past its budget is
reported ``not_proven`` (never guessed), the other kernels keep their classes, and the
exit status follows ``--fail-on``; in this process and over worker processes."""

from __future__ import annotations

import json
import time

import pytest

import kernelcheck.analysis.summary as summary_module
from kernelcheck.cli import main
from tests.conftest import FIXTURES

REASON = "analysis budget of {} s exceeded"
ELEMENTWISE = str(FIXTURES / "ptx/sm_90/elementwise.ptx")


@pytest.fixture
def slow_saxpy(monkeypatch):
    """The analysis of ``saxpy`` never ends by itself; the other kernels are analysed."""
    real = summary_module.analyze_kernel

    def analyze_kernel(module, function, *args, **kwargs):
        if function.name == "saxpy":
            while True:
                time.sleep(0.01)
        return real(module, function, *args, **kwargs)

    monkeypatch.setattr(summary_module, "analyze_kernel", analyze_kernel)


def _jsonl(out: str) -> dict[str, dict]:
    return {r["kernel"]: r for r in map(json.loads, out.splitlines())}


def _classes(argv: list[str], capsys) -> dict[str, str]:
    status = main(["analyze", "--format", "jsonl", "-q", *argv])
    assert status == 0
    return {k: r["class"] for k, r in _jsonl(capsys.readouterr().out).items()}


def test_a_kernel_past_its_budget_is_not_proven_and_the_next_ones_unaffected(
        slow_saxpy, capsys):
    unbudgeted = {"vec_add": "conditional", "relu_f32": "conditional", "fill_f32": "always",
                  "write_thread_ids": "always"}
    started = time.monotonic()
    status = main(["analyze", "--format", "jsonl", "-q", "--kernel-timeout", "2",
                   "--fail-on", "not_proven"])
    assert time.monotonic() - started < 60
    assert status == 1
    records = _jsonl(capsys.readouterr().out)
    saxpy = records.pop("saxpy")
    assert (saxpy["class"], saxpy["verdict"]) == ("not_proven", "not_proven")
    assert saxpy["reason"] == REASON.format(2) and saxpy["reasons"] == [REASON.format(2)]
    assert {k: r["class"] for k, r in records.items()} == unbudgeted


def test_the_text_report_json_and_histogram_say_so(slow_saxpy, capsys):
    assert main(["analyze", ELEMENTWISE, "--kernel-timeout", "1.5"]) == 0
    out = capsys.readouterr().out
    assert f"idempotency: not proven\n    - {REASON.format(1.5)}" in out
    assert "not proven                        1 " in out  # the class histogram
    assert main(["analyze", ELEMENTWISE, "--format", "json", "--kernel", "saxpy",
                 "--kernel-timeout", "0.5"]) == 0
    kernel = json.loads(capsys.readouterr().out)["modules"][0]["kernels"][0]
    assert (kernel["class"], kernel["reasons"]) == ("not_proven", [REASON.format(0.5)])


def test_sarif_counts_it_as_not_proven(slow_saxpy, tmp_path):
    target = tmp_path / "k.sarif"
    assert main(["analyze", ELEMENTWISE, "--kernel", "saxpy", "--format", "sarif", "-o",
                 str(target), "--kernel-timeout", "0.5", "-q"]) == 0
    (result,) = json.loads(target.read_text())["runs"][0]["results"]
    assert result["ruleId"] == "KC003"  # NotProven
    assert REASON.format(0.5) in result["message"]["text"]


def test_an_instance_of_a_kernel_past_its_budget_is_not_proven(slow_saxpy, capsys):
    assert main(["analyze", ELEMENTWISE, "--kernel", "saxpy", "--instance",
                 "p0=0x7f0000000000,p1=0x7f0000001000,p2=0x7f0000002000,p3=2.0,p4=1024",
                 "--grid", "4", "--block", "256", "--kernel-timeout", "0.5", "--format",
                 "jsonl", "-q"]) == 0
    record = _jsonl(capsys.readouterr().out)["saxpy"]
    assert (record["class"], record["verdict"]) == ("not_proven", "not_proven")
    assert record["reason"] == REASON.format(0.5)


def test_a_generous_budget_changes_no_class(capsys):
    none = _classes([], capsys)
    assert _classes(["--kernel-timeout", "600"], capsys) == none
    assert _classes(["--kernel-timeout", "600", "--jobs", "2"], capsys) == none
    assert set(none.values()) == {"conditional", "always"}


def test_over_worker_processes(capsys):
    """A budget no analysis fits in (a microsecond): every kernel is stopped, in the
    worker processes as in this one, and counted as not proven."""
    atomics = str(FIXTURES / "ptx/sm_90/atomics.ptx")
    outs = []
    for jobs in ("2", "1"):
        status = main(["analyze", atomics, ELEMENTWISE, "--format", "jsonl", "--jobs", jobs,
                       "--kernel-timeout", "1e-6", "--fail-on", "not_proven"])
        assert status == 1
        captured = capsys.readouterr()
        records = list(map(json.loads, captured.out.splitlines()))
        assert len(records) == 17
        for record in records:
            assert (record["class"], record["verdict"], record["reason"], record["status"]) \
                == ("not_proven", "not_proven", REASON.format(1e-06), "ok")
        assert "not proven                       17  100.0%" in captured.err
        outs.append(sorted(r["kernel"] for r in records))
    assert outs[0] == outs[1]


def test_help_gives_the_option_and_its_default(capsys):
    assert main(["analyze", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "--kernel-timeout SECONDS stop the analysis" in out
    assert "(default: no budget)" in out and "--kernel-timeout 10" in out


def test_on_dask_worker_threads(slow_saxpy, capsys):
    """Dask runs tasks in threads, where no SIGALRM reaches: the budget is kept there too
    (an in-process cluster, so the slowed analysis is the one its thread runs)."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, processes=False, threads_per_worker=1,
                                  dashboard_address=None) as cluster:
        status = main(["analyze", ELEMENTWISE, "--format", "jsonl", "-q", "--scheduler",
                       cluster.scheduler_address, "--kernel-timeout", "1", "--fail-on",
                       "not_proven"])
    assert status == 1
    records = _jsonl(capsys.readouterr().out)
    assert records["saxpy"]["class"] == "not_proven"
    assert records["saxpy"]["reason"] == REASON.format(1)
    assert {k: r["class"] for k, r in records.items() if k != "saxpy"} == {
        "vec_add": "conditional", "relu_f32": "conditional", "fill_f32": "always",
        "write_thread_ids": "always"}


@pytest.mark.parametrize("report", [["--format", "jsonl"], ["--format", "json"]])
def test_a_construct_the_analysis_does_not_model_is_not_proven_with_why(
        monkeypatch, capsys, report):
    """An UnsupportedFeature raised inside one kernel's analysis (a BRX with no listed
    target in a subroutine) makes that kernel not_proven, saying what, never 'failed'."""
    from kernelcheck.errors import UnsupportedFeature

    real = summary_module.analyze_kernel

    def analyze_kernel(module, function, *args, **kwargs):
        if function.name == "saxpy":
            raise UnsupportedFeature("BRX with no label target", "saxpy: instruction 7")
        return real(module, function, *args, **kwargs)

    monkeypatch.setattr(summary_module, "analyze_kernel", analyze_kernel)
    status = main(["analyze", *report, "-q", ELEMENTWISE])
    assert status == 0
    out = capsys.readouterr().out
    why = "saxpy: instruction 7: unsupported: BRX with no label target"
    if report[1] == "jsonl":
        saxpy = _jsonl(out)["saxpy"]
        assert saxpy["class"] == "not_proven" and saxpy["reasons"] == [why]
        assert "status" not in saxpy or saxpy["status"] != "failed"
    else:
        kernels = {k["name"]: k for k in json.loads(out)["modules"][0]["kernels"]}
        assert kernels["saxpy"]["class"] == "not_proven"
        assert kernels["saxpy"]["reasons"] == [why]
