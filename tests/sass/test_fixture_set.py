"""The SASS fixture set (fixtures/src/sass/, built into fixtures/sass/<arch>/): subroutines,
division by a runtime value and sm_90a instructions, against fixtures/sass/expected.toml and
against the PTX analysis of the same sources."""

from __future__ import annotations

import tomllib
from functools import cache

import pytest

from kernelcheck.analysis.summary import analyze_kernel
from kernelcheck.launch.evaluate import evaluate
from kernelcheck.ptx.parser import parse_ptx_file
from kernelcheck.sass.analysis import analyze_sass_kernel
from kernelcheck.sass.loader import load_cubin_sass
from tests.analysis.test_fixtures import param_bytes
from tests.sass.conftest import FIXTURES, needs_nvdisasm

pytestmark = needs_nvdisasm

SOURCES = FIXTURES / "src" / "sass"
BUILT = FIXTURES / "sass"
EXPECTED = tomllib.loads((BUILT / "expected.toml").read_text())["kernels"]
ORDER = {"never": 0, "conditional": 1, "always": 2}


def _archs(source: str) -> list[str]:
    first = (SOURCES / source).read_text().splitlines()[0]
    return first.split(":", 1)[1].split()


BUILDS = [(arch, source) for source in sorted({k["source"] for k in EXPECTED.values()})
          for arch in _archs(source)]


@cache
def _sass(arch: str, source: str):
    path = BUILT / arch / source.replace(".cu", ".cubin")
    image = load_cubin_sass(path.read_bytes(), str(path))
    assert not image.failures
    module = image.module
    return module, {k.name: analyze_sass_kernel(module, k) for k in module.kernels}


@cache
def _ptx(arch: str, source: str):
    module = parse_ptx_file(BUILT / arch / source.replace(".cu", ".ptx"))
    return module, {k.name: analyze_kernel(module, k) for k in module.kernels}


def _verdict(summary, function, name: str, instance: dict) -> str:
    return evaluate(summary.launch_check, param_bytes(function, instance,
                                                      EXPECTED[name]["param_names"]),
                    instance["grid"], instance["block"]).verdict


def test_every_built_kernel_has_an_expectation():
    for arch, source in BUILDS:
        module, _ = _sass(arch, source)
        assert {k.name for k in module.kernels} == {
            name for name, k in EXPECTED.items() if k["source"] == source}, (arch, source)


@pytest.mark.parametrize(("arch", "source"), BUILDS, ids=lambda v: str(v))
def test_sass_classes_and_instances(arch, source):
    module, summaries = _sass(arch, source)
    for name, summary in summaries.items():
        expected = EXPECTED[name]
        want = expected.get("sass_class", expected["class"])
        assert summary.kernel_class == want, (arch, name, summary.reasons)
        function = module.get_function(name)
        for instance in expected.get("instances", []):
            verdict = _verdict(summary, function, name, instance)
            if instance["verdict"] == "not_idempotent" or not instance.get("sass_proves",
                                                                          True):
                assert verdict != "idempotent", (arch, name, instance)  # never a false one
            else:
                assert verdict == instance["verdict"], (arch, name, instance, verdict)


# Instances the PTX analysis proves and the SASS analysis does not (docs/evaluation.md,
# "SASS against the PTX of the same kernel"). ``row_sum``'s loop: nvcc unrolls it 4 times
# after a remainder loop and counts ``m - m % 4`` down by 4 to 0, which the PTX analysis
# bounds; ptxas unrolls that loop again into steps of 16, then 8, then 4, each testing the
# count left (``> 12``, ``> 4``, ``!= 0``), and a value after a loop ranges over every
# iteration of it, so the 8- and 4-element steps get no bound below ``m``.
# ``spill_sum``'s grid-stride loop, unrolled six times: ptxas computes the next index from
# the sixth unrolled one (``i + 5*stride``) plus the grid's width, and the SASS analysis
# does not read that as an induction variable, so the index has no lower bound.
WEAKER_INSTANCES = {("sm_80", "sub_row_sums"), ("sm_90", "sub_row_sums"),
                    ("sm_90", "spill_sum")}


@pytest.mark.parametrize(("arch", "source"), BUILDS, ids=lambda v: str(v))
def test_sass_at_least_as_precise_as_ptx(arch, source):
    """Where the PTX analysis of the same source finds the class or proves an instance, so
    does the SASS analysis (except the instances of WEAKER_INSTANCES)."""
    ptx_module, ptx = _ptx(arch, source)
    sass_module, sass = _sass(arch, source)
    for name, summary in ptx.items():
        truth = EXPECTED[name]["class"]
        if summary.kernel_class == truth:
            assert sass[name].kernel_class == truth, (arch, name, sass[name].reasons)
        for instance in EXPECTED[name].get("instances", []):
            if (arch, name) in WEAKER_INSTANCES:
                continue
            if _verdict(summary, ptx_module.get_function(name), name, instance) == (
                    "idempotent"):
                assert _verdict(sass[name], sass_module.get_function(name), name,
                                instance) == "idempotent", (arch, name, instance)


def test_weaker_answers_are_sound():
    for name, kernel in EXPECTED.items():
        weaker = kernel.get("sass_class")
        if weaker is not None:
            assert weaker == "not_proven" or ORDER[weaker] < ORDER[kernel["class"]], name
            assert kernel.get("sass_reason"), name
        for instance in kernel.get("instances", []):
            if not instance.get("sass_proves", True):
                assert instance["verdict"] == "idempotent" and instance.get("note"), name


def test_tensor_map_store_is_a_write_at_an_unknown_address():
    _, summaries = _sass("sm_90a", "hopper.cu")
    reasons = summaries["tma_copy_tiles"].reasons
    assert any(r.startswith("write at an unknown address: UTMASTG.2D") for r in reasons)
