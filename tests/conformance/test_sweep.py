"""The generated-sweep machinery (sweep.py) and the formats and layouts its references add:
a wrong expectation is caught, results land in the slots the kernel writes, the FP4/FP6
formats and the mma fragment layouts are the ISA's."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest

from tests.conformance.harness import discover_cases, load_references, run_case
from tests.conformance.reference.gen_mma import ACCUMULATORS, FRAGMENTS, _dims
from tests.conformance.reference.ieee import E2M1, E2M3, E3M2, round_to, value_of
from tests.conformance.sweep import SWEEPS, Form, Operand, Sweep, Thread


def _case(case_id: str):
    return next(c for c in discover_cases() if c.id == case_id)


def test_a_wrong_expectation_is_reported():
    load_references()
    sweep = SWEEPS["compare/gen_select"]
    form = sweep.forms[-1]  # mov.pred: the selector's low bit
    sweep.forms[-1] = replace(form, ref=lambda th: 1 - (th.c & 1))
    try:
        mismatches = run_case(_case("compare/gen_select"))
    finally:
        sweep.forms[-1] = form
    assert len(mismatches) == sweep.threads
    assert {m.buffer for m in mismatches} == {"o_pred"}


def test_results_land_in_their_slots():
    sweep = Sweep("g", "demo", "demo", [Operand("a", "u32", ("0x1", "0x2", "0x3"))])
    sweep.forms += [
        Form("u32", "add.u32 {d}, %a32, 10;", lambda th: th.a + 10),
        Form("f16x2", "mov.b32 {d}, %a32;", lambda th: (th.a, None)),
        Form("u32", "mov.b32 {d}, %a32;", lambda th: None if th.i == 1 else th.a),
    ]
    text = sweep.ptx()
    assert "st.global.b32 [%o_u32+0], %d32;" in text
    assert "st.global.b32 [%o_u32+12], %d32;" in text  # the second u32 form: slot 1 of 3
    assert "st.global.b32 [%o_f16x2+0], %d32;" in text

    class _Inputs:
        def __getitem__(self, name):
            return np.array([1, 2, 3], dtype="<u4")

    expected = sweep.expected(_Inputs())
    assert expected["o_u32"].values.tolist() == [11, 12, 13, 1, 0, 3]
    assert expected["o_u32"].unspecified.tolist() == [False] * 4 + [True, False]
    assert expected["o_f16x2"].unspecified.tolist() == [False, True] * 3
    assert expected["o_f16x2"].nan == "any"


def test_split_moves_the_chosen_forms():
    sweep = Sweep("g", "demo", "demo", [Operand("a", "u32", ("0x1",))], setup="// s")
    sweep.forms += [Form("u32", "mov.b32 {d}, 1;", lambda th: 1),
                    Form("u32", "mov.b32 {d}, 2;", lambda th: 2)]
    part = sweep.split("demo_two", lambda f: "2;" in f.code, "the second")
    assert [f.code for f in sweep.forms] == ["mov.b32 {d}, 1;"]
    assert [f.code for f in part.forms] == ["mov.b32 {d}, 2;"]
    assert part.operands == sweep.operands and part.setup == "// s"
    with pytest.raises(ValueError):
        sweep.split("none", lambda f: False, "")


def test_fp4_and_fp6_are_the_ocp_formats():
    # PTX ISA 5.2.5.2: e2m1 holds 0, 0.5, 1, 1.5, 2, 3, 4, 6 and no infinity or NaN; e2m3 and
    # e3m2 reach 7.5 and 28
    assert [value_of(b, E2M1) for b in range(8)] == [0.0, Fraction(1, 2), 1, Fraction(3, 2), 2,
                                                     3, 4, 6]
    assert value_of(0xF, E2M1) == -6
    assert E2M3.max_finite == Fraction(15, 2) and E3M2.max_finite == 28
    assert round_to(Fraction(100), E2M1) == 0x7 and round_to(float("-inf"), E3M2) == 0x3F
    assert round_to(Fraction(5), E2M1) == 0x6  # the tie 5 rounds to the even 4


@pytest.mark.parametrize("key", sorted(FRAGMENTS))
def test_mma_fragments_hold_each_element_once(key):
    """Across the 32 lanes, each fragment layout places every element of its matrix exactly
    once (for m8n8k4 on .f16: of the four diagonal blocks)."""
    shape, family = key
    m, n, k = _dims(shape, family)
    a, b = FRAGMENTS[key]
    for fragment, rows, cols in ((a, m, k), (b, k, n)):
        seen = Counter(fragment.position(i, lane // 4, lane % 4)
                       for lane in range(32) for i in range(fragment.count))
        assert max(seen.values()) == 1
        if (shape, family) != ("m8n8k4", "16"):
            assert len(seen) == rows * cols
        assert all(0 <= r < rows and 0 <= c < cols for r, c in seen)


@pytest.mark.parametrize("key", sorted(ACCUMULATORS))
def test_mma_accumulators_hold_each_element_once(key):
    fragment = ACCUMULATORS[key]
    seen = Counter(fragment.position(i, lane // 4, lane % 4)
                   for lane in range(32) for i in range(fragment.count))
    assert max(seen.values()) == 1
    assert len(seen) == 32 * fragment.count


def test_threads_see_the_whole_row_operand():
    sweep = Sweep("g", "demo", "demo", [Operand("a", "u32", ("0x1", "0x2", "0x3", "0x4"), row=2)])
    seen = []
    sweep.forms.append(Form("u32", "mov.b32 {d}, 0;",
                            lambda th: seen.append((th.i, th.a, th.a_all)) or 0))

    class _Inputs:
        def __getitem__(self, name):
            return np.array([1, 2, 3, 4], dtype="<u4")

    sweep.expected(_Inputs())
    assert seen == [(0, 1 | 2 << 32, (1 | 2 << 32, 3 | 4 << 32)),
                    (1, 3 | 4 << 32, (1 | 2 << 32, 3 | 4 << 32))]
    assert Thread(0, 0, 0, 0).a_all == ()
