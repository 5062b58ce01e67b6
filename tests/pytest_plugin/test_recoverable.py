"""``@pytest.mark.kernelcheck(recoverable=True)``: faults injected into the launches made
through the ``kernelcheck_recovery`` fixture; a test passes when every detected fault is
recovered and fails, naming the kernel, when one is not."""

from __future__ import annotations

import pytest

from tests.pytest_plugin.conftest import PTX_DIR, load_report

pytest_plugins = ["pytester"]

SUITE = f'''
import numpy as np
import pytest

N = 256
ELEMENTWISE = open("{PTX_DIR}/elementwise.ptx").read()
INPLACE = open("{PTX_DIR}/inplace.ptx").read()


def upload(rec, array):
    ptr = rec.alloc(array.nbytes)
    rec.copy_htod(ptr, array.tobytes())
    return ptr


@pytest.mark.kernelcheck(recoverable=True)
def test_vec_add_recovers_from_failed_launches(kernelcheck_recovery):
    rec = kernelcheck_recovery
    a = upload(rec, np.arange(N, dtype=np.float32))
    b = upload(rec, np.ones(N, dtype=np.float32))
    out = upload(rec, np.zeros(N, dtype=np.float32))
    module = rec.load_module(ELEMENTWISE)
    rec.launch(module, "vec_add", grid=(2, 1, 1), block=(128, 1, 1), params=[out, a, b, N])
    rec.synchronize()
    result = np.frombuffer(rec.copy_dtoh(out, 4 * N), dtype=np.float32)
    assert np.array_equal(result, np.arange(N) + 1.0)


@pytest.mark.kernelcheck(recoverable=True, model="single", seed=3)
def test_in_place_recovers_from_register_flips(kernelcheck_recovery):
    rec = kernelcheck_recovery
    a = upload(rec, np.arange(N, dtype=np.float32))
    module = rec.load_module(INPLACE)
    rec.launch(module, "inplace_add_one", grid=(2, 1, 1), block=(128, 1, 1), params=[a, N])
    rec.synchronize()


@pytest.mark.kernelcheck(recoverable=True)
def test_unrecoverable_when_the_check_never_passes(kernelcheck_recovery):
    rec = kernelcheck_recovery
    a = upload(rec, np.arange(N, dtype=np.float32))
    module = rec.load_module(INPLACE)
    rec.launch(module, "inplace_add_one", grid=(2, 1, 1), block=(128, 1, 1), params=[a, N],
               check=lambda read: False)


@pytest.mark.kernelcheck(recoverable=True)
def test_launches_outside_the_fixture_cannot_be_injected():
    pass
'''


@pytest.fixture
def result(suite):
    suite.makepyfile(test_recover=SUITE)
    return suite.runpytest_subprocess("--kernelcheck", "--kernelcheck-report=report.json",
                                      "-p", "no:cacheprovider", timeout=240)


def test_recovered_faults_pass_and_unrecovered_ones_fail(result, suite):
    result.assert_outcomes(passed=2, failed=2)
    out = result.stdout.str()
    assert "a detected fault in kernel inplace_add_one was not recovered" in out
    assert "needs the test's launches to go through the kernelcheck_recovery fixture" in out
    report = load_report(suite.path / "report.json")["by_test"]
    vec_add = report["test_vec_add_recovers_from_failed_launches"]
    assert vec_add["recovery"]["injected"] == 1
    assert vec_add["recovery"]["detected"] == 1 and vec_add["recovery"]["recovered"] == 1
    assert vec_add["launches"][0]["kernel"] == "vec_add"
    assert vec_add["launches"][0]["source"] == "recovery"
    flips = report["test_in_place_recovers_from_register_flips"]["recovery"]
    assert flips["injected"] == 1 and flips["unrecovered"] == []
    assert "faults injected 1, detected 1, recovered 1, unrecovered 0" in out
