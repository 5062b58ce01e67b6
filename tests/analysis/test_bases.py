"""Pointer provenance of addresses (kernelcheck.analysis.bases) on the large shared-subterm
graphs of unrolled code: answered in time linear in the graph, not in its paths."""

from __future__ import annotations

import time

from kernelcheck.analysis.bases import index_valued, rebased_base
from kernelcheck.analysis.terms import BitXor, Const, Opaque, Param, add, mul, wrap


def _deep(depth: int):
    """``x_{k+1} = x_k ^ x_k``: ``depth`` nodes, ``2**depth`` paths from the top."""
    x = wrap(Opaque("ld@1", 32, memory=True), 32, False)
    for _ in range(depth):
        x = BitXor(x, x)
    return x


def test_a_deep_shared_graph_is_walked_once_per_node():
    index = _deep(80)
    start = time.perf_counter()
    assert index_valued(index, scaled=True)
    out, shape = Param("out", 0, 8), Param("shape", 8, 8)
    address = add(out, mul(Const(4), add(index, BitXor(index, shape))))
    rebased_base(address)
    assert time.perf_counter() - start < 5


def test_a_pointer_deep_in_a_shared_graph_is_still_found():
    x = add(Param("p", 0, 8), Const(0))
    for _ in range(80):
        x = BitXor(x, x)
    assert not index_valued(x)


def test_parts_shared_by_many_addresses_get_the_answer_each_gets_alone():
    from kernelcheck.analysis.bases import forget_parts

    out, other, shape = Param("out", 0, 8), Param("other", 8, 8), Param("shape", 16, 8)
    index = wrap(Opaque("ld@3", 64, memory=True), 64, True)
    addresses = [
        add(out, mul(Const(4), add(index, shape))),             # rebased by shape
        add(out, mul(Const(4), index)),                          # an index: not rebased
        add(out, mul(Const(4), add(index, shape)), other),       # another pointer: no base
        add(out, mul(Const(8), add(index, shape)), Const(16)),   # the same parts again
    ]
    alone = []
    for address in addresses:
        forget_parts()
        alone.append(rebased_base(address))
    forget_parts()
    together = [rebased_base(address) for address in addresses]
    assert together == alone
    assert [r is None for r in together] == [False, True, True, False]
    forget_parts()
