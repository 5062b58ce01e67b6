"""The full self-test on the stand-in driver (no GPU): every section, every instance.

Run: ``python bench/selftest_full.py [--budget 1800] [--out selftest-full.json]
[--random-per-kernel 6] [--trials 200]``

Runs ``kernelcheck selftest --driver standin`` without ``--quick``: the re-execution oracle
and the emulator comparison over every expected.toml instance (the oracle also over
``--random-per-kernel`` drawn instances of every kernel), the recovery campaign with
``--trials`` faults, the launch cost with 100,000 launches x 5. Prints the date, the commit
and the self-test's table (docs/evaluation.md, "Self-test"); exits with the self-test's
status. On the stand-in the "device" is the CPU emulator behind the driver API, so this run
checks the self-test's machinery and the emulator's own consistency, not the hardware.
"""

from __future__ import annotations

import argparse
import datetime
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budget", type=float, default=1800.0)
    parser.add_argument("--out", default="selftest-full.json")
    parser.add_argument("--random-per-kernel", type=int, default=6)
    parser.add_argument("--trials", type=int, default=200)
    args = parser.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip() or "unknown"
    print(f"date: {datetime.date.today().isoformat()}, commit {commit}, "
          f"python {sys.version.split()[0]}")
    cmd = [sys.executable, "-m", "kernelcheck", "selftest", "--driver", "standin",
           "--budget", str(args.budget), "--random-per-kernel", str(args.random_per_kernel),
           "--trials", str(args.trials), "-o", args.out]
    print("$ " + " ".join(["kernelcheck", *cmd[3:]]), flush=True)
    return subprocess.run(cmd, cwd=ROOT).returncode


if __name__ == "__main__":
    sys.exit(main())
