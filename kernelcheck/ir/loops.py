"""Natural loops of a control-flow graph, their nesting, and reducibility.

A back edge is an edge ``latch → header`` whose head dominates its tail; the natural loop of
a header is the header plus every block that reaches one of its latches without passing the
header (Aho, Lam, Sethi, Ullman, *Compilers*, 2nd ed., §9.6.6). Loops sharing a header are
merged into one. In a reducible graph two natural loops with different headers are either
disjoint or nested, which gives the forest of :attr:`Loop.parent` links.

A graph is irreducible when some cycle can be entered at more than one block. Such a cycle
has no dominating header, so it is *not* a natural loop and :func:`natural_loops` does not
report it: callers that reason about every cycle (induction variables, trip counts) must check
:func:`is_reducible` first and answer "not proven" when it is false. Only blocks reachable
from ``entry`` are considered; code that never runs has no loops.
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx

from kernelcheck.ir.cfg import ENTRY
from kernelcheck.ir.dominance import dominates, dominators

__all__ = ["Loop", "natural_loops", "back_edges", "retreating_edges", "is_reducible",
           "irreducible_edges", "loop_depths"]


@dataclass(frozen=True, slots=True)
class Loop:
    """A natural loop.

    Attributes
    ----------
    header : int
        The block every path into the loop enters through.
    latches : tuple of int
        Blocks with a back edge to the header, in index order.
    body : frozenset of int
        Every block of the loop, header and nested loops included.
    exits : tuple of (int, node)
        Edges leaving the loop (source inside, target outside), sorted.
    parent : int or None
        Header of the innermost enclosing loop.
    depth : int
        1 for an outermost loop, 2 for a loop directly inside it, and so on.
    """

    header: int
    latches: tuple[int, ...]
    body: frozenset[int]
    exits: tuple[tuple, ...]
    parent: int | None
    depth: int


def _dfs_order(cfg: nx.DiGraph) -> tuple[dict, list[tuple]]:
    """Preorder numbers and retreating edges of an iterative DFS from ``entry``.

    Successors are visited in sorted order (by ``str``), so the result is deterministic.
    """
    pre: dict = {ENTRY: 0}
    on_stack = {ENTRY}
    retreating: list[tuple] = []
    stack = [(ENTRY, iter(sorted(cfg.successors(ENTRY), key=str)))]
    while stack:
        node, successors = stack[-1]
        advanced = False
        for succ in successors:
            if succ not in pre:
                pre[succ] = len(pre)
                on_stack.add(succ)
                stack.append((succ, iter(sorted(cfg.successors(succ), key=str))))
                advanced = True
                break
            if succ in on_stack:
                retreating.append((node, succ))
        if not advanced:
            stack.pop()
            on_stack.discard(node)
    return pre, retreating


def retreating_edges(cfg: nx.DiGraph) -> tuple[tuple, ...]:
    """Edges from a node to one of its ancestors in a depth-first tree from ``entry``."""
    return tuple(_dfs_order(cfg)[1])


def back_edges(cfg: nx.DiGraph, idom: dict | None = None) -> tuple[tuple, ...]:
    """Edges ``latch → header`` whose header dominates the latch (self loops included).

    Examples
    --------
    >>> back_edges(nx.DiGraph([("entry", 0), (0, 1), (1, 1), (1, 0), (0, "exit")]))
    ((1, 0), (1, 1))
    """
    idom = dominators(cfg) if idom is None else idom
    found = [(u, v) for u, v in cfg.edges if u in idom and dominates(idom, v, u)]
    return tuple(sorted(found, key=str))


def irreducible_edges(cfg: nx.DiGraph, idom: dict | None = None) -> tuple[tuple, ...]:
    """Retreating edges that are not back edges: each enters a cycle that has no header.

    The graph is reducible exactly when there are none, whatever the DFS order (Hecht and
    Ullman, 1974).
    """
    idom = dominators(cfg) if idom is None else idom
    return tuple(sorted(((u, v) for u, v in retreating_edges(cfg)
                         if not dominates(idom, v, u)), key=str))


def is_reducible(cfg: nx.DiGraph) -> bool:
    """Whether every cycle reachable from ``entry`` has a single entry block.

    Examples
    --------
    >>> is_reducible(nx.DiGraph([("entry", 0), (0, 1), (0, 2), (1, 2), (2, 1)]))
    False
    """
    return not irreducible_edges(cfg)


def natural_loops(cfg: nx.DiGraph, idom: dict | None = None) -> tuple[Loop, ...]:
    """The natural loops of ``cfg``, outermost first, then by header.

    Parameters
    ----------
    cfg : networkx.DiGraph
        A control-flow graph from :func:`kernelcheck.ir.cfg.control_flow_graph`.
    idom : dict, optional
        Immediate dominators, when already computed.

    Returns
    -------
    tuple of Loop
        One loop per header. Cycles of an irreducible region are not natural loops and are
        left out (see :func:`is_reducible`).

    Examples
    --------
    >>> g = nx.DiGraph([("entry", 0), (0, 1), (1, 2), (2, 1), (2, 0), (0, "exit")])
    >>> [(l.header, l.latches, sorted(l.body), l.parent, l.depth) for l in natural_loops(g)]
    [(0, (2,), [0, 1, 2], None, 1), (1, (2,), [1, 2], 0, 2)]
    """
    idom = dominators(cfg) if idom is None else idom
    latches: dict = {}
    for latch, header in back_edges(cfg, idom):
        latches.setdefault(header, []).append(latch)

    bodies: dict = {}
    for header, tails in latches.items():
        body = {header}
        work = [t for t in tails if t != header]
        body.update(work)
        while work:
            node = work.pop()
            for pred in cfg.predecessors(node):
                if pred not in body and pred in idom:
                    body.add(pred)
                    work.append(pred)
        bodies[header] = frozenset(body)

    # The parent of a loop is the smallest other loop whose body holds its header.
    parents: dict = {}
    for header, body in bodies.items():
        enclosing = [h for h, b in bodies.items() if h != header and header in b
                     and body <= b]
        parents[header] = min(enclosing, key=lambda h: len(bodies[h])) if enclosing else None

    depths: dict = {}
    for header in bodies:
        depth, node = 1, parents[header]
        while node is not None:
            depth += 1
            node = parents[node]
        depths[header] = depth

    loops = []
    for header, body in bodies.items():
        exits = sorted(((u, v) for u in body for v in cfg.successors(u) if v not in body),
                       key=str)
        loops.append(Loop(header, tuple(sorted(latches[header])), body, tuple(exits),
                          parents[header], depths[header]))
    loops.sort(key=lambda loop: (loop.depth, loop.header))
    return tuple(loops)


def loop_depths(cfg: nx.DiGraph, loops: tuple[Loop, ...]) -> dict:
    """Loop nesting depth of every block (0 outside any loop).

    Examples
    --------
    >>> g = nx.DiGraph([("entry", 0), (0, 0), (0, "exit")])
    >>> loop_depths(g, natural_loops(g))[0]
    1
    """
    depth = {n: 0 for n in cfg if not isinstance(n, str)}
    for loop in loops:
        for node in loop.body:
            depth[node] = max(depth[node], loop.depth)
    return depth
