"""A report of several kernels ends with the class histogram: counts per class that add up
to the kernels reported, and per family when template instances share a name."""

from __future__ import annotations

import json
import re
import subprocess
import sys

from kernelcheck.output.histogram import class_table
from tests.conftest import FIXTURES
from tests.output.test_progress import _stderr_on_a_terminal


def _counts(table: str) -> dict[str, int]:
    rows = re.findall(r"^  (always idempotent|conditionally idempotent|never idempotent|"
                      r"not proven) +([\d,]+) ", table, re.M)
    return {label: int(count.replace(",", "")) for label, count in rows}


def test_counts_add_up_and_failures_count_as_not_proven():
    records = [{"name": "axpby", "class": "conditional"}, {"name": "axpby", "class": "always"},
               {"name": "copy", "class": "never"},
               {"name": "bad", "class": "not_proven", "status": "failed", "cause": "lift",
                "error": "x"}]
    table = class_table(records)
    assert table.startswith("classes of 4 kernels (1 that failed to analyse counted as not "
                            "proven):")
    assert _counts(table) == {"always idempotent": 1, "conditionally idempotent": 1,
                              "never idempotent": 1, "not proven": 1}
    assert re.search(r"^  axpby +2  1 / 1 / 0 / 0$", table, re.M)


def test_families_are_left_out_when_every_name_is_distinct():
    table = class_table([{"name": "a", "class": "always"}, {"name": "b", "class": "never"}])
    assert "families" not in table and _counts(table)["never idempotent"] == 1


def test_a_text_report_ends_with_the_histogram_of_its_kernels(tmp_path):
    ptx = FIXTURES / "ptx" / "sm_90" / "templates.ptx"
    text = subprocess.run([sys.executable, "-m", "kernelcheck", "analyze", str(ptx)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    jsonl = subprocess.run([sys.executable, "-m", "kernelcheck", "analyze", str(ptx),
                            "--format", "jsonl", "-o", "k.jsonl"],
                           capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert jsonl.returncode == 0, jsonl.stderr
    records = [json.loads(line) for line in (tmp_path / "k.jsonl").read_text().splitlines()]
    expected = {"always idempotent": 0, "conditionally idempotent": 0, "never idempotent": 0,
                "not proven": 0}
    labels = {"always": "always idempotent", "conditional": "conditionally idempotent",
              "never": "never idempotent", "not_proven": "not proven"}
    for record in records:
        expected[labels[record["class"]]] += 1
    tail = text.stdout[text.stdout.rindex("classes of"):]
    assert tail.startswith(f"classes of {len(records)} kernels:")
    assert _counts(tail) == expected
    # jsonl keeps standard output for records: the histogram goes to standard error
    assert _counts(jsonl.stderr) == expected


def test_a_library_analysis_on_a_terminal_shows_progress_then_the_histogram(tmp_path):
    status, err = _stderr_on_a_terminal(
        ["analyze", str(FIXTURES / "ptx" / "sm_90"), "--format", "jsonl", "-o", "k.jsonl"],
        tmp_path)
    assert status == 0, err
    assert "images" in err and "<" in err  # the bar, with its time-left field
    records = (tmp_path / "k.jsonl").read_text().splitlines()
    assert f"classes of {len(records):,} kernels" in err
