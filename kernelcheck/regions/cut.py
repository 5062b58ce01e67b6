"""Placing region boundaries: the fewest cuts that leave no clobber inside a region.

The problem (after de Kruijf, Sankaralingam and Jha, "Static analysis and compiler design for
idempotent processing", PLDI 2012, §4: idempotent regions as a hitting set over the paths
that carry clobber antidependences) is stated here for a thread *block*, whose threads run in
any interleaving between two boundaries:

    choose a set ``B`` of instructions (a boundary sits just before each) such that, for every
    region start ``s`` (the entry instruction or a member of ``B``) and every clobber pair
    ``(r, w)``, the :func:`~kernelcheck.regions.graph.window` of ``s`` does not hold both ``r``
    and ``w``; and every non-idempotent atomic is followed at once by a boundary.

The pair is unordered: a thread may read ``x`` after another thread of the block wrote it, or
before, so a region must not hold a read and a may-aliasing write in either order (for one
thread alone, the order of de Kruijf's paths would do). Adding a boundary never makes a
window larger, so the set of violated pairs shrinks as ``B`` grows, and boundaries right
before every access always succeed: a solution always exists for pairs in different
instructions.

Candidates are *gaps*: the positions of a basic block between two consecutive global
accesses (or before the first, or after the last). Positions in one gap cut the same access
windows, so searching gaps is exact; the position chosen in a gap is the one with the least
live state. The search is exhaustive over gap subsets by increasing size while the number of
subsets stays under ``exact_limit`` (the result is then a proven minimum); beyond it a greedy
pass adds the gap that leaves the fewest violated pairs, then drops every boundary the others
make redundant. The greedy answer carries the lower bound the exhaustive part proved.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Collection
from dataclasses import dataclass

import networkx as nx

from kernelcheck.regions.graph import window

__all__ = ["CutResult", "gaps", "violations", "place_boundaries"]


@dataclass(frozen=True, slots=True)
class CutResult:
    """The boundaries chosen (instruction indices, sorted) and how good they are proven.

    ``optimal`` is true when no smaller set exists (besides the forced boundaries after
    non-idempotent atomics); otherwise ``lower_bound`` is the size the exhaustive search
    ruled out below. ``candidates`` is the number of gaps searched.
    """

    boundaries: tuple[int, ...]
    forced: tuple[int, ...]
    optimal: bool
    lower_bound: int
    candidates: int


def gaps(graph: nx.DiGraph, accesses: Collection[int]) -> list[tuple[int, ...]]:
    """The boundary positions of each gap, in program order.

    A gap is a run of positions of one basic block with no global access strictly inside:
    positions ``a+1 .. b`` between consecutive accesses ``a`` and ``b`` (a boundary at ``b``
    sits right before it), from the block's first instruction to its first access, and from
    after its last access to its last instruction.

    Examples
    --------
    >>> g = nx.DiGraph([(0, 1), (1, 2), (2, 3)])
    >>> nx.set_node_attributes(g, 0, "block")
    >>> gaps(g, {1})
    [(0, 1), (2, 3)]
    """
    by_block: dict[int, list[int]] = {}
    for node, block in graph.nodes(data="block"):
        by_block.setdefault(block, []).append(node)
    out: list[tuple[int, ...]] = []
    for block in sorted(by_block):
        current: list[int] = []
        for node in sorted(by_block[block]):
            current.append(node)
            if node in accesses:
                out.append(tuple(current))
                current = []
        if current:
            out.append(tuple(current))
    return out


def violations(graph: nx.DiGraph, entry: int, boundaries: Collection[int],
               pairs: Collection[tuple[int, int]]) -> set[tuple[int, int]]:
    """The pairs ``(r, w)`` some region window holds both of.

    Examples
    --------
    >>> g = nx.DiGraph([(0, 1), (1, 2)])
    >>> violations(g, 0, set(), {(0, 2)}), violations(g, 0, {1}, {(0, 2)})
    ({(0, 2)}, set())
    """
    bset = set(boundaries)
    left = set(pairs)
    bad: set[tuple[int, int]] = set()
    for start in [entry, *sorted(bset)]:
        if not left:
            break
        seen = window(graph, start, bset)
        hit = {p for p in left if p[0] in seen and p[1] in seen}
        bad |= hit
        left -= hit
    return bad


def place_boundaries(graph: nx.DiGraph, entry: int, pairs: Collection[tuple[int, int]],
                     forced: Collection[int], accesses: Collection[int],
                     cost: Callable[[int], int], *, exact_limit: int = 4000) -> CutResult:
    """Choose the boundaries of a kernel (see the module documentation).

    Parameters
    ----------
    graph : networkx.DiGraph
        :func:`~kernelcheck.regions.graph.instruction_graph` of the kernel.
    entry : int
        Its first instruction (always a region start).
    pairs : collection of (int, int)
        Clobber pairs ``(read position, write position)`` with different positions.
    forced : collection of int
        Positions that must be boundaries (right after each non-idempotent atomic).
    accesses : collection of int
        Positions of every global access (they delimit the gaps).
    cost : callable
        Live-state bytes of a boundary at a position (picks the position inside a gap).
    exact_limit : int
        Most gap subsets the exhaustive search may try.

    Returns
    -------
    CutResult

    Examples
    --------
    >>> g = nx.DiGraph([(0, 1), (1, 2), (2, 3)])
    >>> nx.set_node_attributes(g, 0, "block")
    >>> place_boundaries(g, 0, {(1, 3)}, (), {1, 3}, lambda p: 0).boundaries
    (2,)
    """
    forced_set = {p for p in forced if p in graph and p != entry}
    pair_set = {p for p in pairs if p[0] != p[1]}
    base_bad = violations(graph, entry, forced_set, pair_set)
    if not base_bad:
        return CutResult(tuple(sorted(forced_set)), tuple(sorted(forced_set)), True,
                         len(forced_set), 0)
    reps = []
    for gap in gaps(graph, set(accesses)):
        spots = [p for p in gap if p != entry and p not in forced_set]
        if spots:
            reps.append(min(spots, key=lambda p: (cost(p), p)))
    tried = 0
    proven = 0
    for k in range(1, len(reps) + 1):
        count = _binomial(len(reps), k)
        if tried + count > exact_limit:
            break
        tried += count
        for combo in itertools.combinations(reps, k):
            if not violations(graph, entry, forced_set | set(combo), base_bad):
                chosen = forced_set | set(combo)
                return CutResult(tuple(sorted(chosen)), tuple(sorted(forced_set)), True,
                                 len(chosen), len(reps))
        proven = k
    chosen = set(forced_set)
    bad = base_bad
    order: list[int] = []
    while bad:
        # A boundary before every access separates every pair, so some gap always helps.
        best = min((p for p in reps if p not in chosen),
                   key=lambda p: (len(violations(graph, entry, chosen | {p}, bad)), cost(p), p))
        chosen.add(best)
        order.append(best)
        bad = violations(graph, entry, chosen, bad)
    for p in reversed(order):
        if not violations(graph, entry, chosen - {p}, base_bad):
            chosen.discard(p)
    return CutResult(tuple(sorted(chosen)), tuple(sorted(forced_set)), False,
                     len(forced_set) + proven + 1, len(reps))


def _binomial(n: int, k: int) -> int:
    from math import comb

    return comb(n, k)
