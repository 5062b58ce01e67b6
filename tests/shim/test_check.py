"""The C LaunchCheck evaluator agrees with kernelcheck.launch.evaluate: on every fixture
instance exactly, and on random instances never more optimistic."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kernelcheck.analysis.summary import analyze_module
from kernelcheck.launch.check import LaunchCheck
from kernelcheck.launch.evaluate import evaluate
from kernelcheck.ptx.parser import parse_ptx_file
from tests.shim.conftest import EXPECTED, FIXTURES, param_bytes

PTX = sorted((FIXTURES / "ptx" / "sm_90").glob("*.ptx")) + \
    sorted((FIXTURES / "ptx" / "sm_80").glob("*.ptx"))


@pytest.fixture(autouse=True)
def _built(libraries):
    return libraries


@cache
def _summaries(path: Path):
    module = parse_ptx_file(path)
    return module, {s.name: s for s in analyze_module(module)}


@pytest.mark.parametrize("path", PTX, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_same_verdict_and_rule_as_python_on_every_fixture_instance(path):
    from kernelcheck.shim.native import native_evaluate

    module, summaries = _summaries(path)
    checked = 0
    for name, summary in summaries.items():
        expected = EXPECTED.get(name)
        blob = summary.launch_check.to_bytes()
        for instance in (expected or {}).get("instances", []):
            params = param_bytes(module.get_function(name), instance, expected["param_names"])
            allocations = instance.get("allocations")
            python = evaluate(summary.launch_check, params, instance["grid"], instance["block"],
                              allocations)
            c = native_evaluate(blob, params, instance["grid"], instance["block"], allocations)
            assert c == (python.verdict, python.decided_by), (name, instance)
            checked += 1
    assert checked or not summaries


def _conditional():
    out = []
    for path in PTX[:14]:
        module, summaries = _summaries(path)
        out += [(module.get_function(n), s) for n, s in summaries.items()
                if s.kernel_class == "conditional"]
    return out


CONDITIONAL = _conditional()


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(range(len(CONDITIONAL))), st.data())
def test_never_more_optimistic_than_python_on_random_instances(index, data):
    from kernelcheck.shim.native import native_evaluate

    function, summary = CONDITIONAL[index]
    base = 0x7F0000000000
    buf = bytearray(function.param_size)
    for p in function.params:
        if p.size == 8:
            value = base + data.draw(st.integers(-64, 64)) * 256
        else:
            value = data.draw(st.integers(-(1 << 31), (1 << 31) - 1))
        buf[p.offset:p.offset + p.size] = (value % (1 << 8 * p.size)).to_bytes(p.size,
                                                                               "little")
    grid = (data.draw(st.integers(1, 8)), data.draw(st.integers(1, 2)), 1)
    block = (data.draw(st.sampled_from([1, 32, 64, 256])), data.draw(st.integers(1, 2)), 1)
    python = evaluate(summary.launch_check, bytes(buf), grid, block)
    verdict, _ = native_evaluate(summary.launch_check.to_bytes(), bytes(buf), grid, block)
    if python.verdict != "idempotent":
        assert verdict != "idempotent", (function.name, bytes(buf).hex(), grid, block)
    assert verdict == python.verdict  # equal on these (no value beyond 2**100 arises)


def test_malformed_binary_forms_are_refused():
    from kernelcheck.shim.native import native_evaluate

    good = LaunchCheck("k", 0, ((0, 0, 0, 5, 0),), (), ()).to_bytes()
    assert native_evaluate(good, b"", (1,), (1,)) == ("idempotent", "no_clobber")
    for bad in (good[:-1], b"KCLCHK\x00\x01" + good[8:], good[:24] + (6).to_bytes(8, "little")
                + good[32:]):
        with pytest.raises(ValueError):
            native_evaluate(bad, b"", (1,), (1,))


def test_parameter_buffer_shorter_than_the_check_reads_is_not_proven():
    from kernelcheck.shim.native import native_evaluate

    check = LaunchCheck("k", 8, ((1, 0, 8, 0, 0),), (), ())
    assert native_evaluate(check.to_bytes(), b"\0" * 4, (1,), (1,)) == ("not_proven",
                                                                       "no_layout")
