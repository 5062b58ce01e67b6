"""SASS-only images through ``kernelcheck analyze`` and the analysis cache: real classes,
instance verdicts and stored summaries instead of "not proven: reads PTX"."""

from __future__ import annotations

import json

from kernelcheck.cache.store import AnalysisCache, image_hash
from kernelcheck.cache.warm import warm_cache
from kernelcheck.cli import main
from tests.sass.conftest import FIXTURES, needs_nvdisasm

pytestmark = needs_nvdisasm

ELEMENTWISE = str(FIXTURES / "cubin/sm_90/elementwise.cubin")
ATOMICS = FIXTURES / "cubin/sm_80/atomics.cubin"


def test_analyze_reports_sass_classes(capsys):
    assert main(["analyze", "--json", ELEMENTWISE]) == 0
    module = json.loads(capsys.readouterr().out)["modules"][0]
    assert module["language"] == "sass"
    classes = {k["name"]: k["class"] for k in module["kernels"]}
    assert classes["fill_f32"] == "always"
    assert classes["vec_add"] == "conditional"
    # The analysed accesses line up with the SASS instructions of the structural listing.
    kernel = next(k for k in module["kernels"] if k["name"] == "vec_add")
    assert all("byte_range" in a for a in kernel["accesses"])


def test_analyze_decides_a_sass_instance(capsys):
    # out (param_0) and in (param_1) point at the same bytes: the write clobbers the read.
    args = ["analyze", "--json", "--kernel", "relu_f32", "--grid", "1", "--block", "64",
            ELEMENTWISE, "--instance"]
    assert main(args + ["param_0=0x10000,param_1=0x10000,param_2=64"]) == 0
    kernel = json.loads(capsys.readouterr().out)["modules"][0]["kernels"][0]
    assert kernel["verdict"] == "not_idempotent"
    assert main(args + ["param_0=0x10000,param_1=0x20000,param_2=64"]) == 0
    kernel = json.loads(capsys.readouterr().out)["modules"][0]["kernels"][0]
    assert kernel["verdict"] == "idempotent"


def test_warm_cache_stores_sass_summaries(tmp_path):
    cache = AnalysisCache(tmp_path)
    try:
        rows = warm_cache(ATOMICS, cache=cache)
        assert rows and rows[0][2] > 0
        digest = image_hash(ATOMICS.read_bytes())
        stored = cache.get(digest, "atomic_add_all", rows[0][1])
        assert stored is not None and stored.kernel_class == "never"
        maximum = cache.get(digest, "atomic_max_from_array", rows[0][1])
        assert maximum is not None and maximum.kernel_class == "conditional"
    finally:
        cache.close()
