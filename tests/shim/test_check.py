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
            want = (python.verdict, python.decided_by)
            c = native_evaluate(blob, params, instance["grid"], instance["block"], allocations)
            assert c == want, (name, instance)
            if allocations is None:
                grid, block = instance["grid"], instance["block"]
                general = native_evaluate(blob, params, grid, block, path="general")
                assert general == want, (name, instance)
                fast = native_evaluate(blob, params, grid, block, path="fast")
                assert fast in (None, want), (name, instance)  # None: gave up
            checked += 1
    assert checked or not summaries


def test_the_fast_path_decides_most_fixture_instances_by_itself():
    """The compiled form is what makes a first evaluation cheap: it must not give up on
    ordinary instances (only on wraps that move a range, negative 64-bit values, indirect
    accesses and the like)."""
    from kernelcheck.shim.native import fast_size, native_evaluate

    decided = total = 0
    for path in PTX[:14]:
        module, summaries = _summaries(path)
        for name, summary in summaries.items():
            expected = EXPECTED.get(name) or {}
            blob = summary.launch_check.to_bytes()
            size = fast_size(blob)
            if size is not None and name not in ("spmv_csr",):
                assert size[0] <= len(summary.launch_check.program)
            for instance in expected.get("instances", []):
                if "allocations" in instance:
                    continue
                params = param_bytes(module.get_function(name), instance,
                                     expected["param_names"])
                total += 1
                decided += native_evaluate(blob, params, instance["grid"], instance["block"],
                                           path="fast") is not None
    assert total and decided >= 0.8 * total, (decided, total)


def test_fast_path_folds_constants_and_drops_slots_no_pair_reads():
    from kernelcheck.shim.native import fast_size, native_evaluate

    # slot 0..2 constants folded into one; slot 3 (a parameter) is read by no access
    program = ((0, 0, 0, 4, 0), (0, 0, 0, 8, 0), (6, 0, 1, 0, 0), (1, 0, 8, 0, 0),
               (3, 0, 0, 0, 0), (6, 4, 2, 0, 0), (1, 8, 8, 0, 0), (5, 6, 5, 0, 0),
               (1, 16, 8, 0, 0), (5, 8, 5, 0, 0))
    from kernelcheck.launch.check import AccessRecord

    accesses = (AccessRecord(1, 4, 7), AccessRecord(0, 4, 9))
    check = LaunchCheck("k", 24, program, accesses, ((0, 1),))
    blob = check.to_bytes()
    n_ins, _ = fast_size(blob)
    # tid.x, its product by the folded 4 * 8, two parameter reads and two sums; not the
    # parameter no access reads
    assert n_ins == 6
    base = 0x7F0000000000
    buf = bytes(8) + base.to_bytes(8, "little") + (base + 32 * 256).to_bytes(8, "little")
    assert native_evaluate(blob, buf, (1,), (256,), path="fast") == ("idempotent", "disjoint")
    buf = bytes(8) + base.to_bytes(8, "little") + (base + 32 * 255).to_bytes(8, "little")
    assert native_evaluate(blob, buf, (1,), (256,), path="fast") == ("not_idempotent",
                                                                      "overlap")


def test_fast_path_gives_up_where_a_range_would_split_and_the_shim_still_decides():
    from kernelcheck.shim.native import native_evaluate

    # x = wrap32(param + tid.x): crosses 2**32 for param = 0xFFFFFFF0 and 32 threads
    program = ((1, 0, 4, 0, 0), (3, 0, 0, 0, 0), (5, 0, 1, 0, 0), (7, 2, 32, 0, 0),
               (1, 8, 8, 0, 0), (5, 4, 3, 0, 0))
    from kernelcheck.launch.check import AccessRecord

    check = LaunchCheck("k", 16, program, (AccessRecord(1, 1, 5), AccessRecord(0, 1, 4)),
                        ((0, 1),))
    blob = check.to_bytes()
    base = (0x7F0000000000).to_bytes(8, "little")
    wraps = (0xFFFFFFF0).to_bytes(4, "little") + bytes(4) + base
    assert native_evaluate(blob, wraps, (1,), (32,), path="fast") is None
    python = evaluate(check, wraps, (1, 1, 1), (32, 1, 1))
    assert native_evaluate(blob, wraps, (1,), (32,)) == (python.verdict, python.decided_by)
    assert python.verdict == "not_idempotent"  # the wrapped writes reach byte 0 at base
    fits = (16).to_bytes(4, "little") + bytes(4) + base
    assert native_evaluate(blob, fits, (1,), (32,), path="fast") == ("idempotent", "disjoint")


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
    blob = summary.launch_check.to_bytes()
    for path in ("shim", "general", "fast"):
        got = native_evaluate(blob, bytes(buf), grid, block, path=path)
        if got is None:  # the fast path gave up: the shim runs the general evaluator
            continue
        verdict, _ = got
        if python.verdict != "idempotent":
            assert verdict != "idempotent", (path, function.name, bytes(buf).hex(), grid, block)
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


def _imm_check():
    from kernelcheck.launch.check import AccessRecord

    program = ((1, 0, 8, 0, 0),     # 0: base
               (1, 8, 4, 0, 0),     # 1: p, 32 bits
               (7, 1, 32, 1, 0),    # 2: p as signed
               (0, 0, 0, 12, 0),    # 3: 12
               (3, 0, 0, 0, 0),     # 4: tid.x
               (5, 4, 3, 0, 0),     # 5: tid.x + 12 (a range plus a constant)
               (5, 2, 3, 0, 0),     # 6: p + 12 (a point plus a constant)
               (11, 5, 2, 0, 0),    # 7: (tid.x + 12) / p (a range by a point)
               (0, 0, 0, 4, 0),     # 8: 4
               (6, 7, 8, 0, 0),     # 9: 4 * that
               (5, 0, 9, 0, 0),     # 10: written address
               (6, 6, 8, 0, 0),     # 11: 4 * (p + 12)
               (5, 0, 11, 0, 0))    # 12: read address
    return LaunchCheck("k", 12, program, (AccessRecord(1, 4, 10), AccessRecord(0, 4, 12)),
                       ((0, 1),))


def test_fast_path_constant_operands_become_immediates():
    from kernelcheck.shim.native import fast_ops, fast_size

    blob = _imm_check().to_bytes()
    ops = fast_ops(blob)
    assert {"addk", "addkp", "divp", "mulkpos", "mulkpp"} <= set(ops), ops
    assert "div" not in ops
    assert fast_size(blob) == (len(ops), 0)  # no constant slot is copied per launch


@pytest.mark.parametrize("p", [1, 3, 7, -1, -5, 0, 40, -(1 << 31), (1 << 31) - 1])
@pytest.mark.parametrize("threads", [1, 32, 100])
def test_fast_path_immediate_forms_agree_with_python(p, threads):
    from kernelcheck.shim.native import native_evaluate

    check = _imm_check()
    blob = check.to_bytes()
    buf = (0x7F0000000000).to_bytes(8, "little") + (p % (1 << 32)).to_bytes(4, "little")
    python = evaluate(check, buf, (1, 1, 1), (threads, 1, 1))
    want = (python.verdict, python.decided_by)
    assert native_evaluate(blob, buf, (1,), (threads,)) == want
    assert native_evaluate(blob, buf, (1,), (threads,), path="general") == want
    fast = native_evaluate(blob, buf, (1,), (threads,), path="fast")
    if p == 0:
        assert fast is None  # a division by zero: the general evaluator decides
    else:
        assert fast == want


def _bound_check():
    from kernelcheck.launch.check import AccessRecord

    program = ((1, 0, 8, 0, 0),      # 0: base
               (1, 8, 4, 0, 0),      # 1: p
               (3, 0, 0, 0, 0),      # 2: tid.x
               (5, 2, 1, 0, 0),      # 3: tid.x + p (two ranges' sum)
               (1, 12, 4, 0, 0),     # 4: n
               (17, 3, -1, 4, 0),    # 5: bounded by n
               (0, 0, 0, 4, 0),      # 6: 4
               (6, 5, 6, 0, 0),      # 7
               (5, 0, 7, 0, 0),      # 8: written address
               (0, 0, 0, 7, 0),      # 9: 7
               (5, 2, 9, 0, 0),      # 10: tid.x + 7 (a range plus a constant)
               (17, 10, -1, 4, 0),   # 11: bounded by n
               (6, 11, 6, 0, 0),     # 12
               (5, 0, 12, 0, 0))     # 13: read address
    return LaunchCheck("k", 16, program, (AccessRecord(1, 4, 8), AccessRecord(0, 4, 13)),
                       ((0, 1),))


def test_fast_path_fuses_a_bound_into_the_sum_before_it():
    from kernelcheck.shim.native import fast_ops, native_evaluate

    check = _bound_check()
    blob = check.to_bytes()
    ops = fast_ops(blob)
    assert {"addbound", "addkbound"} <= set(ops) and "bound" not in ops, ops
    decided = 0
    for p in (0, 3, 7, 20, 100):
        for n in (0, 5, 10, 40):
            for threads in (1, 8, 32):
                buf = (0x7F0000000000).to_bytes(8, "little") + p.to_bytes(4, "little") + \
                    n.to_bytes(4, "little")
                python = evaluate(check, buf, (1, 1, 1), (threads, 1, 1))
                want = (python.verdict, python.decided_by)
                assert native_evaluate(blob, buf, (1,), (threads,)) == want
                fast = native_evaluate(blob, buf, (1,), (threads,), path="fast")
                assert fast in (None, want), (p, n, threads)  # None: an empty bound
                decided += fast is not None
    assert decided >= 15  # the bounds are empty on the others


def _bitwise_check(op: int, q: int):
    """Reads 4 bytes at ``base + (p OP q)``, writes 4 at ``base + 64``: which verdict holds
    depends on the exact value of ``p OP q`` for the point ``p``."""
    from kernelcheck.launch.check import AccessRecord

    program = ((1, 0, 8, 0, 0),      # 0: base
               (1, 8, 4, 0, 0),      # 1: p, 32 bits
               (7, 1, 32, 1, 0),     # 2: p as signed
               (0, 0, 0, q, 0),      # 3: q
               (op, 2, 3, 0, 0),     # 4: p OP q
               (5, 0, 4, 0, 0),      # 5: read address
               (0, 0, 0, 64, 0),     # 6: 64
               (5, 0, 6, 0, 0))      # 7: written address
    return LaunchCheck("k", 12, program, (AccessRecord(1, 4, 7), AccessRecord(0, 4, 5)),
                       ((0, 1),))


@pytest.mark.parametrize(("op", "p", "q", "verdict"), [
    (14, 71, 127, "idempotent"),       # 71 & 127 = 71, not 64
    (14, 64, 127, "not_idempotent"),   # 64 & 127 = 64
    (15, 128, 1, "idempotent"),        # 129
    (16, 96, 32, "not_idempotent"),    # 96 ^ 32 = 64 (96 | 32 would be 96)
    (16, 200, 8, "idempotent"),        # 192
    (12, 200, 100, "idempotent"),      # 0
    (12, -71, 8, "idempotent"),        # -7: the sign of the dividend
])
def test_bitwise_records_of_two_points_are_exact_in_every_evaluator(op, p, q, verdict):
    from kernelcheck.shim.native import native_evaluate

    check = _bitwise_check(op, q)
    blob = check.to_bytes()
    buf = (0x7F0000000000).to_bytes(8, "little") + (p % (1 << 32)).to_bytes(4, "little")
    python = evaluate(check, buf, (1, 1, 1), (1, 1, 1))
    assert python.verdict == verdict
    want = (python.verdict, python.decided_by)
    assert native_evaluate(blob, buf, (1,), (1,), path="general") == want
    assert native_evaluate(blob, buf, (1,), (1,), path="fast") in (want, None)
    assert native_evaluate(blob, buf, (1,), (1,)) == want
