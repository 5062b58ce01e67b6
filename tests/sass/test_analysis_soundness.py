"""No false "idempotent" from SASS verdicts against the emulator oracle: the oracle runs the
PTX of each fixture kernel, the verdict comes from the lifted SASS of the same source
(fixtures/cubin/sm_80, sm_90) for the same parameter buffer. A reduced form of
``python bench/soundness.py --sass``.

``KERNELCHECK_SASS_ORACLE_INSTANCES`` sets the instances per kernel and architecture
(default 3; each one gets the next pointer placement in turn).
"""

from __future__ import annotations

import os
from functools import cache

import numpy as np

from kernelcheck.analysis.provider import verdict_provider
from kernelcheck.analysis.symbolic import symbolic_kernel
from kernelcheck.emu.soundness import PLACEMENTS, check_soundness, draw_instance
from kernelcheck.ir.nodes import Module
from kernelcheck.sass.lift import lift_function, lift_module
from kernelcheck.sass.loader import load_cubin_sass
from tests.emu.fixture_data import FIXTURES, entry_name, expected, module
from tests.sass.conftest import needs_nvdisasm

pytestmark = needs_nvdisasm

PER_KERNEL = int(os.environ.get("KERNELCHECK_SASS_ORACLE_INSTANCES", "3"))


@cache
def _sass(arch: str, stem: str):
    cubin = FIXTURES / "cubin" / arch / f"{stem}.cubin"
    return load_cubin_sass(cubin.read_bytes(), str(cubin)).module


def _ptx_path(kernel: str, arch: str):
    source = expected()[kernel]["source"]
    path = FIXTURES / "ptx" / arch / source.replace(".cu", ".ptx")
    cubin = FIXTURES / "cubin" / arch / source.replace(".cu", ".cubin")
    return path if path.exists() and cubin.exists() else None


def test_no_false_idempotent_from_sass_verdicts():
    rng = np.random.default_rng(20260612)
    false_positives, runs = [], 0
    for arch in ("sm_80", "sm_90"):
        providers = {}
        for kernel in sorted(expected()):
            path = _ptx_path(kernel, arch)
            if path is None:
                continue
            if path not in providers:
                names = {entry_name(path, k): expected()[k]["param_names"]
                         for k in expected() if _ptx_path(k, arch) == path}
                providers[path] = verdict_provider(lift_module(_sass(arch, path.stem)), names)
            run, entry = providers[path], entry_name(path, kernel)

            def provider(name, params, grid, block, allocations=(), run=run, entry=entry):
                return run(entry, params, grid, block, allocations=allocations or None)

            template = expected()[kernel]["instances"][0]
            instances = [draw_instance(kernel, template, rng, PLACEMENTS[k % len(PLACEMENTS)])
                         for k in range(PER_KERNEL)]
            report = check_soundness(
                instances, provider, module_for=lambda k, path=path: module(path),
                names_for=lambda k: expected()[k]["param_names"],
                entry_for=lambda k, path=path: entry_name(path, k))
            false_positives.extend((arch, fp) for fp in report.false_positives)
            runs += sum(sum(t.values()) for t in report.counts.values())
    assert runs > 100
    assert not false_positives, false_positives[:3]


def test_predicates_are_declared_as_predicates():
    """Past bug: predicate registers declared with a dotted type were read as values, so a
    predicate redefined by an opaque instruction kept its old comparison as a guard. In
    warp_reduce_to_array the store runs for lane 0 of every warp, also where i >= n."""
    sass = _sass("sm_80", "reduction")
    function = lift_function(sass.get_function("warp_reduce_to_array"), sass)
    assert function.register_types["%p0"] == "pred"
    found = symbolic_kernel(Module(None, ("sm_80",), 64, (function,)), function)
    writes = [a for a in found.accesses if a.kind == "write"]
    from kernelcheck.analysis.terms import render

    # The store's only condition is the lane test of the source, (threadIdx.x & 31) == 0
    # (LOP3's predicate output); no comparison with n survives to guard it.
    assert writes and [render(g) for a in writes for g in a.guard] == ["%tid.x & 31 == 0"]
