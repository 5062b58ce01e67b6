#!/usr/bin/env python3
"""Regenerate the committed PTX and cubins of the labelled and adversarial sets.

    python bench/build_sets.py [labelled|adversarial ...]

For every bench/<set>/src/*.cu: ``nvcc -ptx -arch=sm_90 -O3`` to ptx/sm_90/ and
``nvcc -cubin -arch=sm_90 -O3`` to cubin/sm_90/ (the system nvcc, $NVCC or
$CUDA_HOME/bin/nvcc). The runners and tests read the committed files and never run this.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
NVCC = os.environ.get("NVCC", str(Path(os.environ.get("CUDA_HOME", "/usr/local/cuda"))
                                  / "bin" / "nvcc"))


def build(name: str) -> None:
    root = HERE / name
    for kind in ("ptx", "cubin"):
        (root / kind / "sm_90").mkdir(parents=True, exist_ok=True)
    for src in sorted((root / "src").glob("*.cu")):
        for kind in ("ptx", "cubin"):
            out = root / kind / "sm_90" / f"{src.stem}.{kind}"
            cmd = [NVCC, f"-{kind}", "-arch=sm_90", "-O3", src.name, "-o", str(out)]
            print("+", " ".join(cmd), flush=True)
            subprocess.run(cmd, check=True, cwd=src.parent)


if __name__ == "__main__":
    for name in sys.argv[1:] or ["labelled", "adversarial"]:
        build(name)
