"""The idempotency analysis on SASS: every fixture kernel's class and example instances from
the lifted SASS of fixtures/cubin/{sm_80,sm_90}, against fixtures/expected.toml and the PTX."""

from __future__ import annotations

import tomllib
from functools import cache

import pytest

from kernelcheck.analysis.summary import analyze_kernel
from kernelcheck.analysis.terms import Special, contains
from kernelcheck.ir.nodes import Module
from kernelcheck.launch.evaluate import evaluate
from kernelcheck.sass.lift import lift_function, module_variables
from tests.analysis.test_fixtures import param_bytes
from tests.sass.conftest import CUBINS, FIXTURES, needs_nvdisasm

pytestmark = needs_nvdisasm

EXPECTED = tomllib.loads((FIXTURES / "expected.toml").read_text())["kernels"]

# Sound but weaker answers of the SASS analysis, with the class it gives and why. A weaker
# answer is "not_proven" or "conditional" where the truth is stronger; never "always" for
# a kernel that is not, and never a false "idempotent" instance.
# (arch, kernel) -> the class the SASS analysis gives where it is weaker than the PTX
# analysis's. None now: the foreach negation's scalar path (if-converted `@P0 LEA` /
# `@P0 LEA.HI.X` pairs after a `CS2R R8, SRZ`) is proven like its PTX.
KNOWN_WEAKER: dict[tuple[str, str], str] = {}
# Kernels whose class is right but whose example instances the SASS LaunchCheck does not
# prove: the 64-bit grid-stride loop's trip count is not bounded, as in the PTX analysis of
# the same kernel.
WEAKER_INSTANCES = {("sm_80", "copy_gridstride_i64"), ("sm_90", "copy_gridstride_i64"),
                    # The store address holds a 64-bit shift of a pointer difference that
                    # the lift leaves opaque: its bytes are unknown in every instance (and
                    # never bounded by out's allocation, which they do not lie in).
                    ("sm_80", "store_past_pointer_difference"),
                    ("sm_90", "store_past_pointer_difference"),
                    # inline_asm_libs.cu: scratch[i] is written
                    # and read back by the same thread (paired as in the PTX analysis);
                    # ptxas unrolls the asm row loop four times after a remainder loop, and
                    # the unrolled loads' iteration count has no bound (their bytes unknown).
                    ("sm_80", "asm_scratch_write_first"), ("sm_90", "asm_scratch_write_first"),
                    ("sm_80", "asm_row_sum_loop"), ("sm_90", "asm_row_sum_loop"),
                    # The inner product's 4x-unrolled loop: its reads get no byte range and a
                    # pointer read from a table in the parameter buffer has no allocation of
                    # a parameter to bound them (as in PTX, tests/analysis/test_fixtures.py).
                    ("sm_80", "gemm_batched_pointers"), ("sm_90", "gemm_batched_pointers")}
_WEAKER_INSTANCES = set(KNOWN_WEAKER) | WEAKER_INSTANCES


@cache
def lifted(path):
    from kernelcheck.sass.loader import load_cubin_sass

    image = load_cubin_sass(path.read_bytes(), str(path))
    module = image.module
    functions = tuple(lift_function(k, module) for k in module.kernels)
    return Module(None, module.target, 64, module_variables(module.kernels) + functions), image


@pytest.mark.parametrize("path", CUBINS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_sass_classes_and_instances(path):
    module, _ = lifted(path)
    arch = path.parent.name
    for function in module.kernels:
        expected = EXPECTED[function.name]
        summary = analyze_kernel(module, function)
        want = KNOWN_WEAKER.get((arch, function.name), expected["class"])
        assert summary.kernel_class == want, (function.name, summary.reasons)
        for instance in expected.get("instances", []):
            verdict = evaluate(summary.launch_check,
                               param_bytes(function, instance, expected["param_names"]),
                               instance["grid"], instance["block"],
                               instance.get("allocations"))
            if instance["verdict"] == "not_idempotent":
                assert verdict.verdict != "idempotent", (function.name, instance)
            elif (arch, function.name) not in _WEAKER_INSTANCES:
                assert verdict.verdict == instance["verdict"], (function.name, instance,
                                                                verdict)


def test_weaker_table_is_sound():
    """Every documented weaker answer is weaker than the truth, never stronger."""
    order = {"never": 0, "conditional": 1, "always": 2}
    for (_, name), found in KNOWN_WEAKER.items():
        truth = EXPECTED[name]["class"]
        assert found in ("not_proven", "conditional"), name
        if found == "conditional":
            assert order[truth] > order["conditional"], name


def _specials(summary_accesses) -> set[str]:
    return {t.name for a in summary_accesses for t in _walk(a.address) if type(t) is Special}


def _walk(term):
    from kernelcheck.analysis.terms import children

    stack = [term]
    while stack:
        t = stack.pop()
        yield t
        stack.extend(children(t))


def test_launch_dimensions_from_the_constant_bank():
    """c[0x0][0x0..0x14] read as %ntid/%nctaid: the SASS and the PTX of the same kernels
    name the same launch dimensions in their global addresses."""
    from kernelcheck.analysis.symbolic import symbolic_kernel
    from kernelcheck.ptx.parser import parse_ptx_file

    compared = 0
    for path in CUBINS:
        arch = path.parent.name
        ptx_path = FIXTURES / "ptx" / arch / (path.stem + ".ptx")
        if not ptx_path.exists():
            continue
        module, _ = lifted(path)
        ptx = parse_ptx_file(ptx_path)
        for function in module.kernels:
            if function.name not in {k.name for k in ptx.kernels}:
                continue
            sass = symbolic_kernel(module, function)
            reference = symbolic_kernel(ptx, ptx.get_function(function.name))
            if sass.unmodelled or reference.unmodelled:
                continue
            dims = {"%ntid.x", "%ntid.y", "%ntid.z", "%nctaid.x", "%nctaid.y", "%nctaid.z"}
            found = _specials(sass.accesses) & dims
            want = _specials(reference.accesses) & dims
            assert found == want, function.name
            compared += bool(want)
    assert compared >= 5


def test_guarded_store_keeps_its_guard(sass_images):
    """A predicated STG is a store under that predicate: in the fixture ``guarded_*``
    kernels every global write carries a guard literal."""
    path = next(p for p in CUBINS if p.parent.name == "sm_90" and p.stem == "elementwise")
    module, _ = lifted(path)
    function = module.kernels[0]
    from kernelcheck.analysis.symbolic import symbolic_kernel

    writes = [a for a in symbolic_kernel(module, function).accesses if a.kind == "write"]
    assert writes and all(a.guard for a in writes)
    assert not any(contains(a.address, lambda t: False) for a in writes)
