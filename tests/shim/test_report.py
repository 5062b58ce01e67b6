"""Merging the shim's exit reports: launches kept before the analysis are decided with the
shim's evaluator, and a failed analysis is not reported as a matter of waiting."""

from __future__ import annotations

import json
import struct

from kernelcheck.analysis.summary import analyze_module
from kernelcheck.ptx.parser import parse_ptx_file
from kernelcheck.shim.report import format_report, read_reports
from tests.conftest import FIXTURES


class _Cached:
    def __init__(self, summary):
        self.kernel_class = summary.kernel_class
        self.reasons = summary.reasons
        self.check_blob = summary.launch_check.to_bytes()


class _Cache:
    def __init__(self, kernels=None, failed=None):
        self.kernels, self.failed = kernels or {}, failed

    def get(self, digest, name, arch):
        return self.kernels.get(name)

    def image_status(self, digest, arch):
        return ("failed", self.failed) if self.failed else None


def _write(directory, deferred, counts):
    kernel = {"name": "vec_add", "image_hash": "ab" * 32, "arch": "any", "analysed": False,
              "idempotent": 0, "not_idempotent": 0, "not_proven": counts,
              "rules": {"no_analysis": counts}, "deferred_dropped": 0,
              "deferred_no_layout": 0, "deferred": deferred}
    (directory / "shim-1.json").write_text(json.dumps(
        {"format_version": 1, "pid": 1, "graph_launches": 0, "kernels": [kernel],
         "warnings": []}))


def _params(out, a, b, n):
    return struct.pack("<QQQi", out, a, b, n).hex()


def test_deferred_launches_get_the_shims_verdicts(tmp_path):
    module = parse_ptx_file(FIXTURES / "ptx" / "sm_90" / "elementwise.ptx")
    summary = next(s for s in analyze_module(module) if s.name == "vec_add")
    base = 0x7F0000000000
    deferred = [
        {"grid": [4, 1, 1], "block": [256, 1, 1], "count": 3,
         "params": _params(base + 8192, base, base + 4096, 1024)},  # disjoint
        {"grid": [4, 1, 1], "block": [256, 1, 1], "count": 2,
         "params": _params(base, base, base + 4096, 1024)},  # in place
    ]
    _write(tmp_path, deferred, 6)  # one more launch than kept: it stays without analysis
    report = read_reports(tmp_path, _Cache({"vec_add": _Cached(summary)}))
    (kernel,) = report.kernels
    assert (kernel.idempotent, kernel.not_idempotent, kernel.not_proven) == (3, 2, 1)
    assert dict(kernel.rules) == {"disjoint": 3, "overlap": 2, "no_analysis": 1}
    assert kernel.decided_at_exit == 5
    assert report.without_analysis == 1
    text = format_report(report)
    assert "5 of them launched before" in text and "--warm-cache" in text


def test_a_failed_analysis_is_not_a_matter_of_waiting(tmp_path):
    _write(tmp_path, [], 2)
    report = read_reports(tmp_path, _Cache(failed="PtxSyntaxError: line 3"))
    (kernel,) = report.kernels
    assert dict(kernel.rules) == {"analysis_failed": 2}
    assert kernel.kernel_class == "not_proven"
    assert report.without_analysis == 0
    assert "--warm-cache" not in format_report(report)
