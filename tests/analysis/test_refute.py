"""Counterexamples by trying values (kernelcheck.analysis.refute) answer "not proven" only
where Z3, asked the same question, could not prove it either: the answers of
``prove_equal_under`` are Z3's, found sooner."""

from __future__ import annotations

import random

import pytest

from kernelcheck.analysis.refute import counterexample
from kernelcheck.analysis.terms import (
    BitAnd,
    BitOr,
    Cmp,
    Const,
    Div,
    Opaque,
    Param,
    POpaque,
    Rem,
    Shr,
    Special,
    Wrap,
    add,
    mul,
)
from kernelcheck.analysis.unroll import prove_equal_under, solver_proves_equal_under

A, B = Param("a", 0, 8), Param("b", 8, 8)
N32 = Param("n", 16, 4)
TID, NTID, CTAID = Special("%tid.x"), Special("%ntid.x"), Special("%ctaid.x")


def _equal(a, b):
    return lambda value: value(a) == value(b)


def test_the_slow_no_of_a_division_fast_path_is_found_by_trying():
    # From libtorch (a 2-D index divided by a runtime size): Z3 took 2 s to say "sat".
    row = add(mul(Special("%ntid.y"), CTAID), Special("%tid.y"))
    fast = Wrap(Opaque("prmt@20", 32), 32, True)
    a = Shr(Wrap(add(mul(row, N32), TID), 32, True), 31)
    quotient = Div(Wrap(mul(row, N32), 32, True), Wrap(Param("d", 40, 4), 32, True))
    b = Shr(Wrap(add(mul(quotient, N32), TID), 32, True), 31)
    literals = [Cmp("eq", Const(0), fast)]
    found = counterexample(literals, _equal(a, b))
    assert found is not None and found["prmt@20"] == 0
    assert prove_equal_under(literals, a, b) is False
    assert solver_proves_equal_under(literals, a, b) is False


def test_a_true_fast_path_is_still_proven():
    # nvcc's 32-bit path of a 64-bit unsigned division: both operands fit in 32 bits.
    literals = [Cmp("eq", Shr(BitOr(A, B), 32), Const(0)), Cmp("gt", B, Const(0))]
    wide, narrow = Div(A, B), Div(Wrap(A, 32, False), Wrap(B, 32, False))
    assert counterexample(literals, _equal(wide, narrow)) is None
    assert prove_equal_under(literals, wide, narrow) is True


def test_literals_the_solver_leaves_out_are_left_out_here_too():
    # A literal with an opaque predicate has no formula: it constrains nothing.
    literals = [Cmp("lt", A, Const(1 << 40)), POpaque("p")]
    assert counterexample(literals, _equal(Wrap(A, 32, False), A)) is not None
    assert solver_proves_equal_under(literals, Wrap(A, 32, False), A) is False


def test_a_try_needs_every_literal_to_hold():
    literals = [Cmp("lt", A, Const(1 << 32)), Cmp("eq", A, Const(5))]
    assert counterexample(literals, _equal(Wrap(A, 32, False), A)) is None
    assert counterexample([Cmp("eq", A, Const(5))],
                          lambda value: value(A) == 5) is None


def _random_term(rng: random.Random, depth: int):
    leaves = [A, B, N32, TID, NTID, CTAID, Opaque("v", 32), Const(rng.choice((0, 1, 3, 4, 32)))]
    if depth == 0 or rng.random() < 0.3:
        return rng.choice(leaves)
    a, b = _random_term(rng, depth - 1), _random_term(rng, depth - 1)
    kind = rng.randrange(9)
    if kind == 0:
        return add(a, b)
    if kind == 1:
        return mul(a, Const(rng.choice((2, 4, -1))))
    if kind == 2:
        return Wrap(a, rng.choice((32, 64)), rng.random() < 0.5)
    if kind == 3:
        return Div(a, b)
    if kind == 4:
        return Rem(a, b)
    if kind == 5:
        return Shr(a, rng.choice((1, 5, 31, 32)))
    if kind == 6:
        return BitAnd(a, Const(rng.choice((3, 0xFF, 0xFFFFFFF0))))
    if kind == 7:
        return BitOr(a, b)
    return mul(a, b)


@pytest.mark.parametrize("seed", range(4))
def test_no_question_the_solver_proves_is_refuted(seed):
    rng = random.Random(seed)
    refuted = proven = 0
    for _ in range(60):
        literals = [Cmp(rng.choice(("lt", "le", "eq", "ne", "gt", "ge")),
                        _random_term(rng, 2), _random_term(rng, 1))
                    for _ in range(rng.randrange(3))]
        a = _random_term(rng, 3)
        # Half the questions are of a term and a rewrite of it that may or may not keep
        # its value, so that the solver proves some of them.
        b = rng.choice((Wrap(a, 64, False), add(a, Const(0)), _random_term(rng, 3),
                        Shr(mul(a, Const(2)), 1)))
        found = counterexample(literals, _equal(a, b))
        solved = solver_proves_equal_under(literals, a, b)
        if found is not None:
            refuted += 1
            assert not solved, (literals, a, b, found)
        proven += solved
    assert refuted and proven  # both kinds of question were asked
