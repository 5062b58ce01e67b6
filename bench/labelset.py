"""Shared machinery of the labelled and adversarial kernel sets (bench/labelled, bench/adversarial).

A set is a directory holding ``src/*.cu`` (the sources), ``ptx/sm_90/*.ptx`` and
``cubin/sm_90/*.cubin`` (built from them by ``build.py``; committed, so no nvcc is needed to
run) and ``labels.toml``, one ``[[kernel]]`` table per kernel:

    [[kernel]]
    entry  = "nn_euclid"          # PTX entry name (mangled for templates)
    source = "rodinia_nn.cu"
    class  = "conditional"        # always | conditional | never (hand label, see README)
    reason = "..."                # why, from reading the source
      [[kernel.launch]]
      grid = [4, 1, 1]
      block = [256, 1, 1]
      shared = 0                  # dynamic shared memory bytes (optional)
      buffers = { loc = "f32 2048", dist = "f32 1024" }
      args = ["@loc", "@dist", 1000, 1.5, 2.5]   # signature order; "@buf" or "@buf+BYTES"
      verdict = "idempotent"      # idempotent | not_idempotent (hand label of this launch)
      note = "..."

A buffer spec is ``KIND COUNT [A [B]]``: ``f32``/``f64`` uniform in [-1, 1) (or [A, B)),
``i32``/``u32``/``i64``/``u8`` uniform integers in [A, B) (default [0, 100)), ``zero``
(COUNT zero bytes), ``ramp`` (i32 0..COUNT-1), ``step`` (i32 k*A), ``const`` (i32 A),
``perm`` (a random permutation of 0..COUNT-1, i32), ``pairs`` (COUNT i32 pairs
(k*A, A): CSR node records of A edges each), ``ptrs COUNT @a @b+8 ...`` (u64
device addresses of buffers listed before it). A struct passed by value is a list of
``[byte_offset, size, value]`` triples whose values may be ``@buf``. Every buffer is its
own allocation; an argument may point anywhere into one (``@buf+BYTES``) to alias or
overlap another argument;
``"=EXPR"`` is an integer computed from buffer addresses (``"=(@in - @out) // 4"``). A
launch with ``contents_dependent = true`` has a label that holds for some contents only
(the label quantifies over contents): the oracle's verdict on the drawn contents may differ.

The oracle is the emulator with exact tracing on the PTX; the analysis verdicts come from
the PTX and from the lifted sm_90 SASS, with and without the allocation table.
"""

from __future__ import annotations

import argparse
import functools
import re
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kernelcheck.analysis.provider import instance_params  # noqa: E402
from kernelcheck.analysis.summary import analyze_kernel  # noqa: E402
from kernelcheck.emu.emulator import Emulator  # noqa: E402
from kernelcheck.errors import KernelcheckError  # noqa: E402
from kernelcheck.launch.evaluate import evaluate  # noqa: E402
from kernelcheck.ptx.parser import parse_ptx_file  # noqa: E402

CLASSES = ("always", "conditional", "never")
VERDICTS = ("idempotent", "not_idempotent")


def load_labels(set_dir: Path) -> list[dict]:
    with open(set_dir / "labels.toml", "rb") as f:
        kernels = tomllib.load(f)["kernel"]
    for k in kernels:
        if k["class"] not in CLASSES:
            raise ValueError(f"{k['entry']}: class {k['class']!r} is not one of {CLASSES}")
        for launch in k.get("launch", []):
            if launch["verdict"] not in VERDICTS:
                raise ValueError(f"{k['entry']}: verdict {launch['verdict']!r}")
    return kernels


@functools.cache
def ptx_module(path: Path):
    return parse_ptx_file(path)


@functools.cache
def sass_module(path: Path):
    from kernelcheck.sass.lift import lift_module
    from kernelcheck.sass.loader import load_cubin_sass

    return lift_module(load_cubin_sass(path.read_bytes(), str(path)).module)


def artifact(set_dir: Path, source: str, kind: str) -> Path:
    stem = source.removesuffix(".cu")
    return set_dir / kind / "sm_90" / f"{stem}.{kind}"


@functools.cache
def summary(module, entry: str):
    function = next((k for k in module.kernels if k.name == entry), None)
    if function is None:
        raise KeyError(f"no kernel {entry!r} in the module")
    return function, analyze_kernel(module, function)


# ---------------------------------------------------------------- buffers and arguments
def _pointer(text: str, bases: dict) -> int:
    name, _, off = text[1:].partition("+")
    return bases[name] + (int(off, 0) if off else 0)


def _contents(spec: str, rng: np.random.Generator, bases: dict) -> np.ndarray:
    kind, count, *rest = spec.split()
    if kind == "ptrs":
        return np.array([_pointer(t, bases) for t in rest], np.uint64)
    n = int(count)
    a = float(rest[0]) if rest else None
    b = float(rest[1]) if len(rest) > 1 else None
    if kind in ("f32", "f64"):
        lo, hi = (a, b) if a is not None and b is not None else (-1.0, 1.0)
        return rng.uniform(lo, hi, n).astype(np.float32 if kind == "f32" else np.float64)
    if kind in ("i32", "u32", "i64", "u8"):
        lo, hi = (int(a), int(b)) if a is not None and b is not None else (0, 100)
        dtype = {"i32": np.int32, "u32": np.uint32, "i64": np.int64, "u8": np.uint8}[kind]
        return rng.integers(lo, hi, n).astype(dtype)
    if kind == "zero":
        return np.zeros(n, np.uint8)
    if kind == "ramp":
        return np.arange(n, dtype=np.int32)
    if kind == "step":
        return (np.arange(n, dtype=np.int64) * int(a)).astype(np.int32)
    if kind == "const":
        return np.full(n, int(a), np.int32)
    if kind == "pairs":
        out = np.empty(2 * n, np.int32)
        out[0::2] = np.arange(n) * int(a)
        out[1::2] = int(a)
        return out
    if kind == "perm":
        return rng.permutation(n).astype(np.int32)
    raise ValueError(f"unknown buffer kind {kind!r} in {spec!r}")


@dataclass
class Placed:
    """One launch placed on an emulator: argument values and the allocation table."""

    args: list
    allocations: tuple[tuple[int, int], ...]
    bases: dict = field(default_factory=dict)


def place(emu: Emulator, launch: dict, rng: np.random.Generator) -> Placed:
    bases, allocations = {}, []
    for name, spec in launch.get("buffers", {}).items():
        data = _contents(spec, rng, bases)
        size = max(1, data.nbytes)
        base = emu.alloc(size)
        emu.copy_htod(base, data.view(np.uint8))
        bases[name] = base
        allocations.append((base, size))
    args = []
    for value in launch["args"]:
        if isinstance(value, str) and value.startswith("@"):
            args.append(_pointer(value, bases))
        elif isinstance(value, str) and value.startswith("="):  # "=(@in - @out) // 4"
            expr = re.sub(r"@(\w+)", lambda m: str(bases[m.group(1)]), value[1:])
            args.append(int(eval(expr, {"__builtins__": {}})))  # noqa: S307 (bench data)
        elif isinstance(value, list):  # a struct by value: [byte_offset, size, value] triples
            args.append([[o, sz, _pointer(v, bases) if isinstance(v, str) else v]
                         for o, sz, v in value])
        elif isinstance(value, str) and value == "null":
            args.append(0)
        else:
            args.append(value)
    return Placed(args, tuple(allocations), bases)


def _dims(d) -> tuple[int, int, int]:
    d = list(d) + [1] * (3 - len(d))
    return (int(d[0]), int(d[1]), int(d[2]))


def param_bytes(function, args: list) -> bytes:
    if len(args) != len(function.params):
        raise ValueError(f"{function.name} takes {len(function.params)} arguments, "
                         f"{len(args)} given")
    values = [float(v) if isinstance(v, float) else v for v in args]
    return instance_params(function, {f"p{k}": v for k, v in enumerate(values)})


def oracle(set_dir: Path, kernel: dict, launch: dict, seed: int = 0):
    """(oracle verdict or 'error: ...', param bytes of the PTX function, allocations)."""
    module = ptx_module(artifact(set_dir, kernel["source"], "ptx"))
    function, _ = summary(module, kernel["entry"])
    emu = Emulator()
    rng = np.random.default_rng(seed)
    placed = place(emu, launch, rng)
    raw = param_bytes(function, placed.args)
    try:
        program = emu.load_module(module)
        result = emu.launch(program, kernel["entry"], grid=_dims(launch["grid"]),
                            block=_dims(launch["block"]), params=raw, trace=True,
                            shared_bytes=int(launch.get("shared", 0)))
        verdict = result.trace.verdict
    except (KernelcheckError, ValueError, OverflowError, KeyError) as exc:
        verdict = f"error: {type(exc).__name__}: {exc}"
    return verdict, raw, placed.allocations


def analyzer(module, entry: str, raw: bytes, launch: dict, allocations) -> str:
    _, s = summary(module, entry)
    return evaluate(s.launch_check, raw, _dims(launch["grid"]), _dims(launch["block"]),
                    allocations or None).verdict


# ---------------------------------------------------------------- one pass over a set
@dataclass
class KernelResult:
    entry: str
    label: str
    classes: dict                      # front end -> analysed class
    launches: list = field(default_factory=list)   # dicts, one per launch
    errors: list = field(default_factory=list)


def run_set(set_dir: Path, kernels: list[dict], fronts=("ptx", "sass"),
            seed: int = 0) -> list[KernelResult]:
    results = []
    for k in kernels:
        modules = {}
        for front in fronts:
            try:
                path = artifact(set_dir, k["source"], "ptx" if front == "ptx" else "cubin")
                modules[front] = ptx_module(path) if front == "ptx" else sass_module(path)
            except (KernelcheckError, OSError) as exc:
                modules[front] = exc
        res = KernelResult(k["entry"], k["class"], {})
        for front, module in modules.items():
            if isinstance(module, Exception):
                res.classes[front] = f"error: {module}"
                continue
            try:
                res.classes[front] = summary(module, k["entry"])[1].kernel_class
            except (KernelcheckError, KeyError) as exc:
                res.classes[front] = f"error: {exc}"
        for index, launch in enumerate(k.get("launch", [])):
            truth, raw, allocations = oracle(set_dir, k, launch, seed)
            row = {"index": index, "label": launch["verdict"], "oracle": truth,
                   "note": launch.get("note", ""),
                   "contents_dependent": bool(launch.get("contents_dependent", False))}
            for front, module in modules.items():
                if isinstance(module, Exception) or res.classes[front].startswith("error"):
                    continue
                buf = raw  # the SASS function takes the same parameter buffer
                for tables in (False, True):
                    try:
                        v = analyzer(module, k["entry"], buf, launch,
                                     allocations if tables else None)
                    except (KernelcheckError, ValueError) as exc:
                        v = f"error: {exc}"
                    row[(front, tables)] = v
            res.launches.append(row)
        results.append(res)
    return results


def is_unsound(claim: str, truth: str) -> bool:
    """A claim of idempotency against a truth that is not (an oracle error decides nothing)."""
    return claim == "idempotent" and truth == "not_idempotent"


# ---------------------------------------------------------------- the report
def _reasons(set_dir: Path, kernel: dict, front: str) -> str:
    path = artifact(set_dir, kernel["source"], "ptx" if front == "ptx" else "cubin")
    module = ptx_module(path) if front == "ptx" else sass_module(path)
    s = summary(module, kernel["entry"])[1]
    return "; ".join(s.reasons)[:300]


def report(set_dir: Path, kernels: list[dict], fronts: tuple[str, ...], out=sys.stdout) -> dict:
    start = time.perf_counter()
    results = run_set(set_dir, kernels, fronts)
    by_entry = {k["entry"]: k for k in kernels}
    figures = {"kernels": len(results), "seconds": 0.0}
    class_hits = dict.fromkeys(fronts, 0)
    launch_hits = {(f, t): 0 for f in fronts for t in (False, True)}
    launches = 0
    unsound: list[str] = []
    unsound_entries: set[str] = set()
    label_checks: list[str] = []
    disagreements: list[str] = []
    print("| kernel | label | " + " | ".join(fronts) + " |", file=out)
    print("|---|---|" + "---|" * len(fronts), file=out)
    for res in results:
        print(f"| {res.entry[:40]} | {res.label} | "
              + " | ".join(res.classes.get(f, "-")[:40] for f in fronts) + " |", file=out)
        for f in fronts:
            got = res.classes.get(f, "")
            if got == res.label:
                class_hits[f] += 1
            else:
                why = _reasons(set_dir, by_entry[res.entry], f) if not got.startswith(
                    "error") else got
                disagreements.append(f"{f} class {res.entry}: label {res.label}, got {got} "
                                     f"({why})")
            if got == "always" and res.label != "always":
                unsound.append(f"{f} class {res.entry}: always, label {res.label}")
        for row in res.launches:
            launches += 1
            truth = row["label"]
            if row["oracle"] != truth and not (row["contents_dependent"]
                                                and not row["oracle"].startswith("error")):
                label_checks.append(f"{res.entry} launch {row['index']}: label {truth}, "
                                    f"oracle {row['oracle']}")
            for f in fronts:
                for tables in (False, True):
                    got = row.get((f, tables), "missing")
                    proved = got == "idempotent"
                    if proved == (truth == "idempotent"):
                        launch_hits[(f, tables)] += 1
                    elif not proved:
                        disagreements.append(
                            f"{f} launch {res.entry}#{row['index']} "
                            f"({'with' if tables else 'without'} allocations): label {truth}, "
                            f"got {got}")
                    if is_unsound(got, truth) or is_unsound(got, row["oracle"]):
                        unsound_entries.add(res.entry)
                        unsound.append(f"{f} launch {res.entry}#{row['index']} "
                                       f"({'with' if tables else 'without'} allocations): "
                                       f"idempotent, label {truth}, oracle {row['oracle']}")
    n = max(1, len(results))
    print(file=out)
    for f in fronts:
        pct = 100.0 * class_hits[f] / n
        figures[f"class_{f}"] = pct
        print(f"class agreement {f.upper():4s}: {class_hits[f]}/{len(results)} = {pct:.1f}%",
              file=out)
    for (f, tables), hits in launch_hits.items():
        pct = 100.0 * hits / max(1, launches)
        figures[f"launch_{f}_{'alloc' if tables else 'noalloc'}"] = pct
        print(f"launch agreement {f.upper():4s} {'with' if tables else 'without'} allocations: "
              f"{hits}/{launches} = {pct:.1f}%", file=out)
    figures["unsound"] = len(unsound)
    figures["unsound_kernels"] = sorted(unsound_entries)
    figures["known_issues"] = sorted(k["entry"] for k in kernels if k.get("known_issue"))
    figures["label_checks"] = len(label_checks)
    print(f"unsound verdicts: {len(unsound)}", file=out)
    for line in unsound:
        print(f"  UNSOUND {line}", file=out)
    for k in kernels:
        if k.get("known_issue"):
            print(f"  known issue {k['entry']}: {k['known_issue']}", file=out)
    print(f"label checks against the oracle: {launches - len(label_checks)}/{launches} agree",
          file=out)
    for line in label_checks:
        print(f"  LABEL? {line}", file=out)
    print(f"disagreements ({len(disagreements)}):", file=out)
    for line in disagreements:
        print(f"  - {line}", file=out)
    figures["seconds"] = time.perf_counter() - start
    print(f"({figures['seconds']:.1f} s)", file=out)
    return figures


def main(set_dir: Path, description: str, argv=None) -> int:
    """The command line of a set's runner (``run.py``): ``--kernels``, ``--front``; exits 1
    on an unsound verdict or a label check that fails."""
    options = argparse.ArgumentParser(description=description)
    options.add_argument("--kernels", default="", help="comma-separated entry names")
    options.add_argument("--front", choices=("ptx", "sass", "both"), default="both")
    args = options.parse_args(argv)
    kernels = load_labels(set_dir)
    if args.kernels:
        wanted = set(args.kernels.split(","))
        kernels = [k for k in kernels if k["entry"] in wanted]
    fronts = ("ptx", "sass") if args.front == "both" else (args.front,)
    figures = report(set_dir, kernels, fronts)
    return 1 if figures["unsound"] or figures["label_checks"] else 0
