"""A small PyTorch training run for the self-test: eager AdamW steps and a compiled model.

``python torch_step.py --steps N --out FILE`` trains a two-layer MLP with AdamW
(``foreach=True``, so PyTorch's multi-tensor-apply kernels run) for N steps, then a
``torch.compile``'d block (Linear, GELU, LayerNorm: Triton kernels) for N steps, on CUDA, and
writes JSON: a SHA-256 of every parameter after training (equal runs give equal digests) and
the time of each step (the compiled model's first step, which compiles, is timed apart).
Deterministic algorithms are requested so that two runs compute the same bytes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import time

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import torch  # noqa: E402
from torch import nn  # noqa: E402


def _steps(model, optimizer, x, y, count):
    times = []
    for _ in range(count):
        start = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    torch.manual_seed(0)
    torch.use_deterministic_algorithms(True, warn_only=True)
    dev = torch.device("cuda")
    x = torch.randn(64, 256, device=dev)
    y = torch.randn(64, 256, device=dev)
    mlp = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 256)).to(dev)
    eager = _steps(mlp, torch.optim.AdamW(mlp.parameters(), lr=1e-3, foreach=True), x, y,
                   args.steps)
    block = nn.Sequential(nn.Linear(256, 256), nn.GELU(), nn.LayerNorm(256)).to(dev)
    compiled = torch.compile(block)
    opt = torch.optim.AdamW(block.parameters(), lr=1e-3, foreach=True)
    first = _steps(compiled, opt, x, y, 1)
    rest = _steps(compiled, opt, x, y, args.steps)
    digest = hashlib.sha256()
    for p in list(mlp.parameters()) + list(block.parameters()):
        digest.update(p.detach().cpu().contiguous().numpy().tobytes())
    with open(args.out, "w") as handle:
        json.dump({"digest": digest.hexdigest(), "eager_step_s": eager,
                   "compile_step_s": first[0], "compiled_step_s": rest,
                   "torch": torch.__version__}, handle)


if __name__ == "__main__":
    main()
