"""Rendering terms for reports: the text of a huge shared term is cut without walking it all.

The terms of unrolled kernels share sub-terms so much that one address can have a million
distinct nodes. :func:`render` writes at most ``RENDER_LIMIT`` characters; it must give the
same text as writing the whole term out and cutting it, and it must not visit the nodes the
cut leaves out.
"""

from __future__ import annotations

import pytest

from kernelcheck.analysis import terms
from kernelcheck.analysis.terms import (
    RENDER_LIMIT,
    BitAnd,
    Cmp,
    Const,
    Max,
    Min,
    PAnd,
    Param,
    Special,
    add,
    mul,
    render,
)


def _written_out(t) -> str:
    """The whole text of the small terms below, written from their shape alone."""
    if type(t) is Param or type(t) is Special:
        return t.name
    if type(t) is Const:
        return str(t.value)
    if type(t) in (Min, Max):
        return f"{type(t).__name__.lower()}({_written_out(t.a)}, {_written_out(t.b)})"
    if type(t) is BitAnd:
        a, b = (f"({_written_out(x)})" if type(x) is BitAnd else _written_out(x)
                for x in (t.a, t.b))
        return f"{a} & {b}"
    raise AssertionError(type(t))


def _cut(text: str) -> str:
    return text if len(text) <= RENDER_LIMIT else text[:RENDER_LIMIT - 1] + "…"


def _balanced(kind, depth: int, leaf_names):
    if depth == 0:
        return Param(next(leaf_names), 0, 8)
    return kind(_balanced(kind, depth - 1, leaf_names), _balanced(kind, depth - 1, leaf_names))


@pytest.mark.parametrize("kind", [Min, Max, BitAnd])
@pytest.mark.parametrize("depth", [1, 3, 6, 9])
def test_text_is_the_whole_term_cut_at_the_limit(kind, depth):
    names = (f"p{i}" for i in range(1 << depth))
    term = _balanced(kind, depth, names)
    assert render(term) == _cut(_written_out(term))


def test_a_term_with_a_million_paths_renders_without_visiting_them(monkeypatch):
    # Each level uses the one below twice: 2**40 paths, 41 distinct nodes, and a text of
    # terabytes written out; and a wide balanced tree of 2**16 leaves.
    shared = Special("%tid.x")
    for _ in range(40):
        shared = Min(shared, add(shared, Const(1)))
    wide = _balanced(Max, 16, (f"q{i}" for i in range(1 << 16)))
    visited = 0
    original = terms._render_node

    def counting(term, names, memo):
        nonlocal visited
        visited += 1
        return original(term, names, memo)

    monkeypatch.setattr(terms, "_render_node", counting)
    for term in (shared, wide, PAnd(Cmp("lt", wide, shared), Cmp("lt", shared, wide)),
                 mul(Param("n", 0, 8), add(wide, Const(3)))):
        text = render(term)
        assert len(text) == RENDER_LIMIT and text.endswith("…")
    assert visited < 2_000, visited
