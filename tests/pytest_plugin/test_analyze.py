"""The ``kernelcheck_analyze`` fixture (available without ``--kernelcheck``)."""

from __future__ import annotations

import pytest

from tests.pytest_plugin.conftest import PTX_DIR


def test_summaries_of_a_file(kernelcheck_analyze):
    classes = {s.name: s.kernel_class for s in kernelcheck_analyze(PTX_DIR / "atomics.ptx")}
    assert classes["atomic_add_all"] == "never"
    assert classes["atomic_max_const"] == "always"


def test_json_of_bytes(kernelcheck_analyze):
    summaries = kernelcheck_analyze((PTX_DIR / "elementwise.ptx").read_bytes(), as_json=True)
    vec_add = next(s for s in summaries if s["name"] == "vec_add")
    assert vec_add["class"] == "conditional"
    assert vec_add["launch_check"]


def test_unreadable_input_raises(kernelcheck_analyze, tmp_path):
    from kernelcheck.errors import KernelcheckError

    with pytest.raises(KernelcheckError):
        kernelcheck_analyze(tmp_path / "missing.ptx")
