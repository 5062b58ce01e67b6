"""Walks over the terms of a kernel's addresses take time linear in the shared graph.

Paths merged one after the other leave an address that is a join of sums of joins, each
join's values sharing everything below them: a walk that follows every path through such
a term takes time exponential in its depth. libtorch's flash-attention split-KV kernels
build such addresses; these tests build them directly.
"""

from __future__ import annotations

import time

from kernelcheck.analysis.summary import _residue, residue_disjoint
from kernelcheck.analysis.symbolic import SymbolicAccess
from kernelcheck.analysis.terms import Add, Bound, Const, Join, Mul, Opaque, Param, Wrap, add

P = Param("p", 0, 8)


def _residue_by_the_rule(t) -> tuple[int, int]:
    """The residue rule restated without sharing (congruence modulo a power of two)."""
    if type(t) is Const:
        return 64, t.value % (1 << 64)
    if type(t) is Add:
        parts = [_residue_by_the_rule(a) for a in t.args]
        m = min(p[0] for p in parts)
        return m, sum(p[1] for p in parts) % (1 << m) if m else 0
    if type(t) is Mul and type(t.args[0]) is Const:
        c = t.args[0].value
        v = (c & -c).bit_length() - 1 if c else 64
        m, r = _residue_by_the_rule(Mul(t.args[1:]) if len(t.args) > 2 else t.args[1])
        m = min(64, m + v)
        return m, (c * r) % (1 << m) if m else 0
    if type(t) is Wrap:
        m, r = _residue_by_the_rule(t.arg)
        m = min(m, t.bits)
        return m, r % (1 << m) if m else 0
    if type(t) is Bound:
        return _residue_by_the_rule(t.arg)
    if type(t) is Join:
        found = {_residue_by_the_rule(a) for a in t.args}
        return found.pop() if len(found) == 1 else (0, 0)
    return 0, 0


def _merged_offsets(depth: int, steps=(16, 32)):
    term = Mul((Const(16), Opaque("i", 64)))
    for k in range(depth):
        term = Join((add(term, Const(steps[0])), Wrap(add(term, Const(steps[1] + 64 * k)),
                                                       64, False)))
    return term


def test_residues_of_shared_terms_equal_the_rule():
    for depth in range(1, 10):
        for steps in ((16, 32), (16, 24), (4, 8)):
            term = _merged_offsets(depth, steps)
            assert _residue(term) == _residue_by_the_rule(term)


def test_a_deep_shared_address_is_decided_quickly():
    # Every value of the written offset is 0 mod 16, the read is 8 bytes after it: the
    # residues alone prove the pair apart, after 2**100 paths through the sums.
    offset = _merged_offsets(100)
    write = SymbolicAccess(None, "k", "write", "global", add(P, offset), 8, None)
    read = SymbolicAccess(None, "k", "read", "global", add(P, offset, Const(8)), 8, None)
    start = time.process_time()
    assert residue_disjoint(write, read)
    assert time.process_time() - start < 5
