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


def _verdicts(check, buf: bytes, block=(1, 1, 1)):
    """The Python verdict, after checking that both C paths give the same (the fast one
    may decline)."""
    from kernelcheck.shim.native import native_evaluate

    blob = check.to_bytes()
    python = evaluate(check, buf, (1, 1, 1), block)
    want = (python.verdict, python.decided_by)
    assert native_evaluate(blob, buf, (1,), block, path="general") == want
    assert native_evaluate(blob, buf, (1,), block, path="fast") in (want, None)
    assert native_evaluate(blob, buf, (1,), block) == want
    return python.verdict


@pytest.mark.parametrize(("mask", "verdict"), [
    (-8, "idempotent"),              # tid & ~7 <= 56: reads [0, 60)
    (0xFFFFFFF8, "idempotent"),      # the same mask as an unsigned 32-bit constant
    (0xF0, "idempotent"),            # on the bits of 0..62 the same as ~15: <= 48
    (0x3B, "not_idempotent"),        # clears bit 2 only: just <= 59 is known
    (-16, "idempotent"),             # <= 48
])
def test_an_and_that_rounds_a_range_down_to_a_multiple_is_exact_in_every_evaluator(
        mask, verdict):
    from kernelcheck.launch.check import AccessRecord

    # Reads 4 bytes at base + (tid.x & mask) for tid.x in [0, 62], writes 4 at base + 60.
    program = ((1, 0, 8, 0, 0),      # 0: base
               (3, 0, 0, 0, 0),      # 1: tid.x
               (0, 0, 0, mask, 0),   # 2: mask
               (14, 1, 2, 0, 0),     # 3: tid.x & mask
               (5, 0, 3, 0, 0),      # 4: read address
               (0, 0, 0, 60, 0),     # 5: 60
               (5, 0, 5, 0, 0))      # 6: written address
    check = LaunchCheck("k", 8, program, (AccessRecord(1, 4, 6), AccessRecord(0, 4, 4)),
                        ((0, 1),))
    buf = (0x7F0000000000).to_bytes(8, "little")
    assert _verdicts(check, buf, block=(63, 1, 1)) == verdict


def _count_down_check(step: int, guard_point: bool = False):
    """A loop counting ``x`` down by ``-step`` to 0 (``x != 0``): reads 4 bytes at
    ``base + 4*k`` in iteration ``k``, writes 4 at ``base + 16``. ``x0`` is the parameter at
    byte 8; with ``guard_point`` it is ``x0`` without its own value (no value: the loop's
    header is not reached)."""
    from kernelcheck.launch.check import AccessRecord

    d = 32 | 1 << 8 | 2 << 9  # 32 bits, signed, mode "ne"
    program = [(1, 0, 8, 0, 0),          # 0: base
               (1, 8, 4, 0, 0),          # 1: x0
               (7, 1, 32, 1, 0),         # 2: x0 as signed
               (0, 0, 0, -step, 0),      # 3: step
               (0, 0, 0, 0, 0)]          # 4: bound 0
    first = 2
    if guard_point:
        program.append((20, 2, 2, 0, 0))  # 5: x0 != x0
        first = 5
    n = len(program)
    program += [(19, first, 3, 4, d),        # n: tripmax
                (18, n, 0, 0, 0),            # n+1: k
                (0, 0, 0, 4, 0),             # n+2: 4
                (6, n + 2, n + 1, 0, 0),     # n+3: 4*k
                (5, 0, n + 3, 0, 0),         # n+4: read address
                (0, 0, 0, 16, 0),            # n+5: 16
                (5, 0, n + 5, 0, 0)]         # n+6: written address
    return LaunchCheck("k", 12, tuple(program),
                       (AccessRecord(1, 4, n + 6), AccessRecord(0, 4, n + 4)), ((0, 1),))


@pytest.mark.parametrize(("x0", "step", "verdict"), [
    (12, 4, "idempotent"),        # iterations 0..3 read [0, 16)
    (16, 4, "not_idempotent"),    # iteration 4 reads [16, 20)
    (14, 4, "not_proven"),        # 14 - 4k is never 0: the count wraps around (unmodelled)
    (-12, 4, "not_proven"),       # counts away from the bound
    (3, 1, "idempotent"),         # the step of one, as before
    (0, 4, "idempotent"),         # the test fails at iteration 0
])
def test_a_count_down_by_a_step_that_divides_it_bounds_the_loop_in_every_evaluator(
        x0, step, verdict):
    check = _count_down_check(step)
    buf = (0x7F0000000000).to_bytes(8, "little") + (x0 % (1 << 32)).to_bytes(4, "little")
    assert _verdicts(check, buf) == verdict


def test_a_loop_whose_test_no_value_reaches_runs_no_iteration_in_every_evaluator():
    # Its first tested value is excluded by a guard at this launch: the header is not
    # reached, so the read in the loop does not run (it used to count as iteration 0).
    check = _count_down_check(4, guard_point=True)
    buf = (0x7F0000000000).to_bytes(8, "little") + (20).to_bytes(4, "little")
    assert _verdicts(check, buf) == "idempotent"
    assert _verdicts(_count_down_check(4), buf) == "not_idempotent"


def test_a_wrap_that_folds_a_thread_bounded_value_keeps_the_lattice_test_out_in_c():
    # The C evaluators, on the instances tests/launch/test_lattice.py decides in Python.
    from kernelcheck.shim.native import native_evaluate
    from tests.launch.test_lattice import wrapped_index_check, wrapped_index_instances

    check = wrapped_index_check().to_bytes()
    for params, idempotent in wrapped_index_instances():
        expected = "idempotent" if idempotent else "not_idempotent"
        for path in ("shim", "general", "fast"):
            answer = native_evaluate(check, params, (1, 1, 1), (1, 1, 1), path=path)
            assert answer is None and path == "fast" or answer[0] == expected, (path, params)
