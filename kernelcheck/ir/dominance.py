"""Dominators and post-dominators of a control-flow graph built by :mod:`kernelcheck.ir.cfg`.

A node ``a`` dominates ``b`` when every path from ``entry`` to ``b`` passes ``a``; ``a``
post-dominates ``b`` when every path from ``b`` to ``exit`` passes ``a``. Results are the
immediate-dominator maps networkx returns (node → its immediate dominator, the root mapping
to itself), from which :func:`dominates` answers queries by walking up the tree.

Blocks that cannot reach ``exit`` (an infinite loop, a spin on a flag) have no
post-dominators in the plain definition. :func:`post_dominators` gives each such block an
extra virtual edge to ``exit`` before computing. Adding edges only adds paths, and a node
post-dominates another only if it lies on *every* path to exit, so the virtual edges can only
remove post-dominance facts, never invent one: every fact reported holds in the real graph.
Blocks that ``entry`` does not reach are absent from :func:`dominators` (nothing dominates
code that never runs; callers must not ask).
"""

from __future__ import annotations

import networkx as nx

from kernelcheck.ir.cfg import ENTRY, EXIT

__all__ = ["dominators", "post_dominators", "dominance_frontiers", "dominates",
           "exitless_blocks"]


def dominators(cfg: nx.DiGraph) -> dict:
    """Immediate dominators of every node reachable from ``entry``.

    Parameters
    ----------
    cfg : networkx.DiGraph
        A control-flow graph with the ``entry`` sentinel.

    Returns
    -------
    dict
        Node → immediate dominator; ``entry`` maps to itself.

    Examples
    --------
    >>> g = nx.DiGraph([("entry", 0), (0, 1), (0, 2), (1, 3), (2, 3), (3, "exit")])
    >>> dominators(g)[3]
    0
    """
    idom = nx.immediate_dominators(cfg, ENTRY)
    idom.setdefault(ENTRY, ENTRY)
    return idom


def exitless_blocks(cfg: nx.DiGraph) -> tuple:
    """Nodes from which no path reaches ``exit`` (infinite loops and what leads only there).

    Examples
    --------
    >>> exitless_blocks(nx.DiGraph([("entry", 0), (0, 0), ("exit", "exit")]))
    ('entry', 0)
    """
    if EXIT not in cfg:
        return tuple(cfg)
    reaching = nx.ancestors(cfg, EXIT) | {EXIT}
    return tuple(n for n in cfg if n not in reaching)


def post_dominators(cfg: nx.DiGraph) -> dict:
    """Immediate post-dominators of every node, computed on the reversed graph from ``exit``.

    Nodes that cannot reach ``exit`` get a virtual edge to ``exit`` first (see the module
    documentation: this keeps every reported fact true). Every node of ``cfg`` is in the
    result; ``exit`` maps to itself.

    Examples
    --------
    >>> g = nx.DiGraph([("entry", 0), (0, 1), (0, 2), (1, 3), (2, 3), (3, "exit")])
    >>> post_dominators(g)[0]
    3
    """
    graph = cfg
    stuck = [n for n in exitless_blocks(cfg) if n != EXIT]
    if stuck:
        graph = nx.DiGraph(cfg.edges)
        graph.add_nodes_from(cfg)
        graph.add_edges_from((n, EXIT) for n in stuck)
    ipdom = nx.immediate_dominators(graph.reverse(copy=False), EXIT)
    ipdom.setdefault(EXIT, EXIT)
    return ipdom


def dominance_frontiers(cfg: nx.DiGraph) -> dict:
    """Dominance frontier of every node reachable from ``entry`` (node → set of nodes).

    Examples
    --------
    >>> g = nx.DiGraph([("entry", 0), (0, 1), (0, 2), (1, 3), (2, 3), (3, "exit")])
    >>> dominance_frontiers(g)[1]
    {3}
    """
    return nx.dominance_frontiers(cfg, ENTRY)


def dominates(idom: dict, a, b) -> bool:
    """Whether ``a`` dominates ``b`` (reflexively) in the tree ``idom``.

    Works for post-dominators too, given the map from :func:`post_dominators`. A node absent
    from ``idom`` (unreachable) is dominated by nothing but itself.

    Examples
    --------
    >>> idom = {"entry": "entry", 0: "entry", 1: 0}
    >>> dominates(idom, 0, 1), dominates(idom, 1, 0)
    (True, False)
    """
    if a == b:
        return True
    node = b
    while node in idom:
        parent = idom[node]
        if parent == node:
            return False
        if parent == a:
            return True
        node = parent
    return False
