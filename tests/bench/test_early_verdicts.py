"""bench/bench_early_verdicts.py on a fixture cubin: the kernels an atomic decides, and the
whole analysis giving each of them the same class."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from tests.sass.conftest import FIXTURES, needs_nvdisasm

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_early_verdicts.py"


@needs_nvdisasm
def test_the_bench_counts_the_decided_kernels_and_finds_no_other_class(capsys):
    spec = importlib.util.spec_from_file_location("bench_early_verdicts", BENCH)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    cubin = FIXTURES / "cubin" / "sm_90" / "atomics.cubin"
    assert bench.main(["--file", str(cubin), "--images", "1", "--kernel-timeout", "20"]) == 0
    out = capsys.readouterr().out
    assert "12 kernels" in out
    assert "decided by an atomic: 4; the whole analysis gives them {'never': 4}" in out
