"""The control-flow graph of a function, as a plain :class:`networkx.DiGraph`.

Nodes are the block indices of :attr:`Function.blocks <kernelcheck.ir.nodes.Function.blocks>`
plus two sentinels, :data:`ENTRY` and :data:`EXIT`. Each node has the attribute ``block``
(the :class:`~kernelcheck.ir.nodes.BasicBlock`, ``None`` for the sentinels); each edge has
``kind``, one of ``"fallthrough"``, ``"branch"`` or ``"exit"``, and ``kinds``, the tuple of
every reason the edge exists (a guarded ``bra`` to the very next block is both a branch and a
fall-through, and a ``DiGraph`` holds one edge per pair).

Edges, per the PTX ISA §9.7.12 (control flow instructions):

* ``entry`` → the first block (``fallthrough``), or → ``exit`` for an empty body;
* ``bra L``: → the block labelled ``L`` (``branch``); ``brx.idx``: → every label of its
  ``.branchtargets`` list;
* ``ret``, ``exit`` and ``trap`` → ``exit`` (``exit``); ``trap`` aborts the kernel, so no
  code after it runs;
* a guarded terminator (``@%p bra``, ``@%p ret``) also falls through to the next block;
* a block not ending in an unguarded terminator falls through to the next block, the last
  one (an empty final block too) to ``exit``.

Blocks no path from ``entry`` reaches are kept; :func:`unreachable_blocks` names them.
"""

from __future__ import annotations

import networkx as nx

from kernelcheck.errors import UnsupportedFeature
from kernelcheck.ir.nodes import BranchTargets, Function
from kernelcheck.ir.operands import branch_targets

__all__ = ["ENTRY", "EXIT", "control_flow_graph", "graph_skeleton", "unreachable_blocks",
           "block_of_label", "instruction_blocks"]

#: Sentinel node standing before the first block.
ENTRY = "entry"
#: Sentinel node every return, exit and trap leads to.
EXIT = "exit"

_EXIT_OPCODES = frozenset({"ret", "exit", "trap", "RET", "EXIT", "KILL"})
_BRANCH_OPCODES = frozenset({"bra", "brx", "BRA", "BRX", "JMP", "JMX"})
_ENDING_OPCODES = _BRANCH_OPCODES | _EXIT_OPCODES
_KIND_RANK = {"fallthrough": 0, "exit": 1, "branch": 2}


def _add_edge(graph: nx.DiGraph, source, target, kind: str) -> None:
    if graph.has_edge(source, target):
        data = graph.edges[source, target]
        if kind not in data["kinds"]:
            data["kinds"] = data["kinds"] + (kind,)
            # A branch that also falls through is reported as a branch.
            if _KIND_RANK[kind] > _KIND_RANK[data["kind"]]:
                data["kind"] = kind
        return
    graph.add_edge(source, target, kind=kind, kinds=(kind,))


def block_of_label(function: Function) -> dict[str, int]:
    """Map every label of ``function`` to the index of the block it starts.

    Examples
    --------
    >>> from kernelcheck.ptx.parser import parse_ptx
    >>> f = parse_ptx(".version 8.0\\n.target sm_90\\n.address_size 64\\n"
    ...               ".entry k() { L: ret; }").get_function("k")
    >>> block_of_label(f)
    {'L': 0}
    """
    return {label: block.index for block in function.blocks for label in block.labels}


def instruction_blocks(function: Function) -> dict[int, int]:
    """Map every instruction index of ``function`` to the index of its block."""
    return {i.index: block.index for block in function.blocks for i in block.instructions}


def graph_skeleton(function: Function) -> nx.DiGraph:
    """The nodes of a control-flow graph of ``function`` (``entry``, each block index with
    its ``block``, ``exit``) and its one edge from ``entry``: to the first block, or to
    ``exit`` when there is none. The edges between blocks are the caller's.

    >>> from kernelcheck.ptx.parser import parse_ptx
    >>> f = parse_ptx(".version 8.0\\n.target sm_90\\n.address_size 64\\n"
    ...               ".entry k() { ret; }").get_function("k")
    >>> list(graph_skeleton(f).edges(data="kind"))
    [('entry', 0, 'fallthrough')]
    """
    blocks = function.blocks
    graph = nx.DiGraph(name=function.name)
    graph.add_node(ENTRY, block=None)
    for block in blocks:
        graph.add_node(block.index, block=block)
    graph.add_node(EXIT, block=None)
    _add_edge(graph, ENTRY, blocks[0].index if blocks else EXIT, "fallthrough")
    return graph


def control_flow_graph(function: Function) -> nx.DiGraph:
    """Build the control-flow graph of ``function``.

    Parameters
    ----------
    function : Function
        A function with a body (a declaration yields ``entry → exit``).

    Returns
    -------
    networkx.DiGraph
        Nodes: block indices, :data:`ENTRY` and :data:`EXIT`, each with ``block``. Edges
        carry ``kind`` and ``kinds`` (see the module documentation).

    Raises
    ------
    UnsupportedFeature
        When a branch names a label the function does not define, or a ``brx.idx`` names
        no ``.branchtargets`` list of the function.

    Examples
    --------
    >>> from kernelcheck.ptx.parser import parse_ptx
    >>> f = parse_ptx(".version 8.0\\n.target sm_90\\n.address_size 64\\n"
    ...               ".entry k() { .reg .pred %p<2>; @%p1 bra L; L: ret; }").get_function("k")
    >>> list(control_flow_graph(f).edges(data="kind"))
    [('entry', 0, 'fallthrough'), (0, 1, 'branch'), (1, 'exit', 'exit')]
    """
    blocks = function.blocks
    graph = graph_skeleton(function)
    if not blocks:
        return graph

    labels = block_of_label(function)
    tables = {s.name: s.labels for s in function.body or () if type(s) is BranchTargets}
    last = len(blocks) - 1
    for block in blocks:
        following = EXIT if block.index == last else block.index + 1
        instr = block.last
        if instr is None or instr.opcode not in _ENDING_OPCODES:
            _add_edge(graph, block.index, following, "fallthrough")
            continue
        if instr.opcode in _EXIT_OPCODES:
            _add_edge(graph, block.index, EXIT, "exit")
        else:
            targets = branch_targets(instr, tables)
            if not targets:
                raise UnsupportedFeature(
                    f"{instr.full_opcode} with no label target", _where(function, instr))
            for label in targets:
                if label not in labels:
                    raise UnsupportedFeature(
                        f"branch target {label!r} is not a label or .branchtargets list "
                        f"of {function.name}", _where(function, instr))
                _add_edge(graph, block.index, labels[label], "branch")
        if instr.guard is not None:
            _add_edge(graph, block.index, following, "fallthrough")
    return graph


def _where(function: Function, instr) -> str:
    pos = instr.pos
    at = f" line {pos.line}" if pos is not None else ""
    return f"{function.name}: instruction {instr.index}{at}"


def unreachable_blocks(cfg: nx.DiGraph) -> tuple[int, ...]:
    """The blocks no path from :data:`ENTRY` reaches, in index order.

    Examples
    --------
    >>> from kernelcheck.ptx.parser import parse_ptx
    >>> f = parse_ptx(".version 8.0\\n.target sm_90\\n.address_size 64\\n"
    ...               ".entry k() { ret; L: ret; }").get_function("k")
    >>> unreachable_blocks(control_flow_graph(f))
    (1,)
    """
    reached = nx.descendants(cfg, ENTRY)
    return tuple(sorted(n for n in cfg if n not in reached and n not in (ENTRY, EXIT)))
