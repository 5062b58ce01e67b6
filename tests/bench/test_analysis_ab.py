"""The two-version analysis benchmark runs on a fixture and finds a tree equal to itself."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_same_tree_twice_gives_the_same_results():
    done = subprocess.run(
        [sys.executable, "bench/bench_analysis_ab.py", "--file",
         "fixtures/cubin/sm_90/atomics.cubin", "--before", ".", "--after", ".", "--images",
         "1", "--kernels", "3", "--rounds", "1", "--min-instructions", "1"],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "3 kernels of 1 images" in done.stdout
    assert "results differ for 0 of 3 kernels" in done.stdout
    assert "round 1 before" in done.stdout and "round 1 after" in done.stdout
