"""PyTorch under ``kernelcheck run --recover``: equal results, verdicts per kernel family,
and the overhead, measured side by side in one call.

The program (:mod:`kernelcheck.selftest.programs.torch_step`: an MLP trained with AdamW, whose
``foreach`` update runs PyTorch's multi-tensor-apply kernels, and a ``torch.compile``'d block,
whose kernels Triton generates) runs plainly and under ``kernelcheck run --recover``,
alternately (twice each in a full run), so that the machine's load hits both alike. Checks:
every run's parameters after training have the same SHA-256 (the shim and its saves change
no result). Measured: the verdicts of the launches by kernel family (from the run's report)
and the overhead ratio, the median step time under the shim over the plain one, for the
eager and the compiled steps.

Needs a GPU and a PyTorch built with CUDA in the Python that runs the self-test; otherwise the
section says "skipped: no device".
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from kernelcheck.selftest.context import SectionContext
from kernelcheck.selftest.results import SectionResult

__all__ = ["run", "kernel_family", "family_counts"]

PROGRAM = Path(__file__).resolve().parent / "programs" / "torch_step.py"
_FAMILIES = (("foreach", ("multi_tensor_apply", "foreach")),
             ("triton", ("triton_",)),
             ("gemm", ("gemm", "cutlass", "xmma", "cublas", "sm90_", "sm80_", "ampere_")),
             ("elementwise", ("elementwise_kernel", "vectorized_elementwise")),
             ("reduce", ("reduce_kernel",)))


def kernel_family(name: str) -> str:
    """The family of a kernel by its (mangled) name.

    >>> kernel_family("_ZN2at6native12_GLOBAL__N_125multi_tensor_apply_kernelI..."), \\
    ...     kernel_family("triton_poi_fused_gelu_0"), kernel_family("my_kernel")
    ('foreach', 'triton', 'other')
    """
    lowered = name.lower()
    if lowered.startswith("triton"):
        return "triton"
    for family, marks in _FAMILIES:
        if any(m in lowered for m in marks):
            return family
    return "other"


def family_counts(report: dict) -> dict[str, dict[str, int]]:
    """Launches per verdict, per kernel family, from a ``kernelcheck run --report`` file."""
    out: dict[str, dict[str, int]] = {}
    for k in report.get("kernels", []):
        row = out.setdefault(kernel_family(k["name"]),
                             {"kernels": 0, "idempotent": 0, "not_idempotent": 0,
                              "not_proven": 0})
        row["kernels"] += 1
        for verdict in ("idempotent", "not_idempotent", "not_proven"):
            row[verdict] += int(k.get(verdict, 0))
    return out


def _torch_ready(env: dict) -> str | None:
    probe = ("import sys\ntry:\n import torch\nexcept Exception as e:\n print(e); sys.exit(3)\n"
             "sys.exit(0 if torch.cuda.is_available() else 4)")
    try:
        proc = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                              text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return "importing torch took over 120 s"
    if proc.returncode == 3:
        return "no device (PyTorch is not installed)"
    if proc.returncode:
        return "no device (PyTorch has no usable CUDA device)"
    return None


def _once(args: list[str], env: dict, timeout: float) -> str:
    """Run one program; what went wrong, or "" when it exited 0."""
    try:
        proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"timed out after {timeout:.0f} s"
    if proc.returncode:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return f"exit status {proc.returncode}: {tail}"
    return ""


def run(ctx: SectionContext) -> SectionResult:
    """The ``pytorch`` section (see the module docs)."""
    if ctx.device.standin:
        return SectionResult.skipped("pytorch", "no device (the stand-in driver runs no "
                                                "PyTorch kernels)")
    env = dict(os.environ)
    reason = _torch_ready(env)
    if reason:
        return SectionResult.skipped("pytorch", reason)
    result = SectionResult("pytorch")
    steps = 5 if ctx.quick else 15
    rounds = 1 if ctx.quick else 2
    outputs: dict[str, list[dict]] = {"plain": [], "shim": []}
    reports = []
    with tempfile.TemporaryDirectory(prefix="kc-torch-") as tmp:
        tmp = Path(tmp)
        env["TRITON_CACHE_DIR"] = str(tmp / "triton")
        env["TORCHINDUCTOR_CACHE_DIR"] = str(tmp / "inductor")
        for r in range(rounds):
            for mode in ("plain", "shim"):
                out = tmp / f"{mode}{r}.json"
                args = [sys.executable, str(PROGRAM), "--steps", str(steps), "--out", str(out)]
                if mode == "shim":
                    report = tmp / f"report{r}.json"
                    wait = max(5.0, min(60.0, ctx.time_left() / 4))
                    args = [sys.executable, "-m", "kernelcheck", "run", "--recover", "--quiet",
                            "--driver", "system", "--report", str(report),
                            "--analysis-wait", f"{wait:.0f}", "--", *args]
                budget = ctx.time_left()
                if budget < 20:
                    result.capped = True
                    break
                problem = _once(args, env, budget)
                if problem or not out.exists():
                    result.fail(f"{mode} run {r}", f"the training program failed: "
                                                   f"{problem or 'no output'}",
                                ctx.reproducer(None))
                    return result.finish()
                outputs[mode].append(json.loads(out.read_text()))
                if mode == "shim" and report.exists():
                    reports.append(json.loads(report.read_text()))
    digests = {o["digest"] for runs in outputs.values() for o in runs}
    if len(digests) == 1 and outputs["shim"]:
        result.passed += 1
    elif outputs["shim"]:
        result.fail("torch_step", f"parameters after training differ: plain "
                                  f"{outputs['plain'][0]['digest'][:12]}, under the shim "
                                  f"{outputs['shim'][0]['digest'][:12]}",
                    ctx.reproducer(None))
    ratios = {}
    for phase in ("eager_step_s", "compiled_step_s"):
        plain = [t for o in outputs["plain"] for t in o[phase]]
        shim = [t for o in outputs["shim"] for t in o[phase]]
        if plain and shim:
            ratios[phase] = statistics.median(shim) / statistics.median(plain)
    families = family_counts(reports[-1]) if reports else {}
    recovery = reports[-1].get("recovery", {}) if reports else {}
    result.figures.update({"ratios": ratios, "families": families, "recovery": recovery,
                           "torch": outputs["plain"][0].get("torch") if outputs["plain"]
                           else None, "steps": steps, "rounds": rounds})
    fam = "; ".join(f"{f}: {c['kernels']} kernels, {c['idempotent']}/{c['not_idempotent']}/"
                    f"{c['not_proven']}" for f, c in sorted(families.items()))
    over = ", ".join(f"{k.split('_')[0]} x{v:.2f}" for k, v in ratios.items())
    result.summary = (f"MLP+AdamW(foreach) and torch.compile, {steps} steps x {rounds}: "
                      f"results {'equal' if len(digests) == 1 else 'DIFFERENT'}; step time "
                      f"under the shim {over or '-'}; launches idempotent/not/not proven "
                      f"by family: {fam or '-'}")
    return result.finish()
