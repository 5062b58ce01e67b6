"""``pytest --kernelcheck`` on suites of cuda-python tests run against the stand-in driver:
the idempotent marker, the per-test table, the ``kernel_instances`` fixture, the JSON report
and the JUnit XML properties."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from tests.pytest_plugin.conftest import load_report

pytest_plugins = ["pytester"]

SUITE = '''
import numpy as np
import pytest

from kc_client import Gpu

N = 1024


@pytest.fixture(scope="module")
def gpu():
    return Gpu()


def buffers(gpu):
    a = gpu.upload(np.arange(N, dtype=np.float32))
    b = gpu.upload(np.ones(N, dtype=np.float32))
    out = gpu.upload(np.zeros(N, dtype=np.float32))
    return a, b, out


def vec_add(gpu, out, a, b):
    f = gpu.kernel("elementwise.ptx", "vec_add")
    gpu.launch(f, (4, 1, 1), (256, 1, 1), np.uint64(out), np.uint64(a), np.uint64(b),
               np.int32(N))


@pytest.mark.kernelcheck(idempotent=True)
def test_vec_add_disjoint(gpu):
    a, b, out = buffers(gpu)
    vec_add(gpu, out, a, b)
    assert np.array_equal(gpu.download(out, N), np.arange(N) + 1.0)


@pytest.mark.kernelcheck(idempotent=True)
def test_vec_add_in_place(gpu):
    a, b, _ = buffers(gpu)
    vec_add(gpu, a, a, b)
    assert np.array_equal(gpu.download(a, N), np.arange(N) + 1.0)


@pytest.mark.kernelcheck(idempotent=True)
def test_atomic_sum(gpu):
    total = gpu.upload(np.zeros(1, dtype=np.float32))
    values = gpu.upload(np.ones(256, dtype=np.float32))
    f = gpu.kernel("atomics.ptx", "atomic_add_all")
    gpu.launch(f, (1, 1, 1), (256, 1, 1), np.uint64(total), np.uint64(values),
               np.int32(256))
    assert gpu.download(total, 1)[0] == 256.0


def test_in_place_unmarked(gpu):
    a, b, _ = buffers(gpu)
    vec_add(gpu, a, a, b)
    vec_add(gpu, a, a, b)


def test_instances_fixture(gpu, kernel_instances):
    assert len(kernel_instances) == 0
    a, b, out = buffers(gpu)
    vec_add(gpu, out, a, b)
    (one,) = kernel_instances
    assert one.kernel == "vec_add"
    assert one.grid == (4, 1, 1) and one.block == (256, 1, 1)
    assert one.params == (out, a, b, N)
    assert one.verdict == "idempotent", one.reason
'''


@pytest.fixture
def result(suite):
    suite.makepyfile(test_suite=SUITE)
    return suite.runpytest_subprocess("--kernelcheck", "--kernelcheck-report=report.json",
                                      "--junitxml=junit.xml", "-p", "no:cacheprovider",
                                      timeout=240)


def test_outcomes_follow_the_verdicts(result):
    result.assert_outcomes(passed=3, failed=2)
    out = result.stdout.str()
    assert "running pytest again under 'kernelcheck run'" in result.stderr.str()
    failed = {line.split(" - ")[0].split("::")[-1] for line in out.splitlines()
              if line.startswith("FAILED")}
    assert failed == {"test_vec_add_in_place", "test_atomic_sum"}


def test_failure_messages_name_kernel_instance_and_reason(result):
    out = result.stdout.str()
    in_place = out[out.index("_ test_vec_add_in_place _"):]
    in_place = in_place[:in_place.index("\n_")] if "\n_" in in_place else in_place
    assert "1 of 1 kernel instances not proven idempotent" in in_place
    assert "vec_add grid=(4, 1, 1) block=(256, 1, 1) params=(0x" in in_place
    assert "not_idempotent (overlap" in in_place
    assert "READ_THEN_WRITE" in in_place
    assert "overlaps vec_add_param_1" in in_place      # the analysis' reason for the kernel
    atomic = out[out.index("_ test_atomic_sum _"):]
    assert "atomic_add_all grid=(1, 1, 1) block=(256, 1, 1)" in atomic
    assert "non_idempotent_atomic" in atomic
    assert "atomic add: non-idempotent read-modify-write" in atomic


def test_table_lists_each_test(result):
    out = result.stdout.str()
    table = out[out.index("kernelcheck: kernel instances per test"):]
    rows = {line.split()[0].split("::")[-1]: line.split()[1:] for line in table.splitlines()
            if "::" in line}
    # kernels, instances, idempotent, not idempotent, not proven
    assert rows["test_vec_add_disjoint"] == ["1", "1", "1", "0", "0"]
    assert rows["test_in_place_unmarked"] == ["1", "2", "0", "2", "0"]
    assert rows["test_atomic_sum"] == ["1", "1", "0", "1", "0"]


def test_json_report(result, suite):
    report = load_report(suite.path / "report.json")
    assert report["shim_loaded"] is True
    tests = report["by_test"]
    assert tests["test_vec_add_in_place"]["outcome"] == "failed"
    launch = tests["test_vec_add_in_place"]["launches"][0]
    assert launch["kernel"] == "vec_add" and launch["verdict"] == "not_idempotent"
    assert launch["params"][0] == launch["params"][1]        # out == a
    assert tests["test_vec_add_disjoint"]["idempotent"] == 1
    assert report["instances"] == sum(t["instances"] for t in report["tests"]) == 6


def test_junit_properties(result, suite):
    root = ET.parse(suite.path / "junit.xml").getroot()
    props = {case.get("name"): {p.get("name"): p.get("value")
                                for p in case.iter("property")}
             for case in root.iter("testcase")}
    assert props["test_in_place_unmarked"]["kernelcheck_instances"] == "2"
    assert props["test_in_place_unmarked"]["kernelcheck_not_idempotent"] == "2"
    assert props["test_atomic_sum"]["kernelcheck_kernels"] == "atomic_add_all"
    assert props["test_vec_add_disjoint"]["kernelcheck_idempotent"] == "1"
