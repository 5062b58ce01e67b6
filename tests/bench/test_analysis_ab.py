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


def test_slower_than_draws_among_the_kernels_the_before_version_is_slow_on():
    def run(threshold):
        done = subprocess.run(
            [sys.executable, "bench/bench_analysis_ab.py", "--file",
             "fixtures/cubin/sm_90/atomics.cubin", "--before", ".", "--after", ".",
             "--images", "1", "--kernels", "2", "--rounds", "1", "--min-instructions", "1",
             "--slower-than", str(threshold)],
            cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return done.stdout

    everything = run(0)
    total = everything.split(" of ", 1)[1].split(" kernels took", 1)[0]
    assert f"{total} of {total} kernels took at least 0 s" in everything
    assert "2 kernels of 1 images" in everything
    none = run(1000)
    assert f"0 of {total} kernels took at least 1000 s" in none
    assert "0 kernels of 1 images" in none
