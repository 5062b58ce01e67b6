"""The instruction-level control-flow graph regions are cut in, and the reach of a region start.

Region boundaries sit *before* instructions: a boundary at instruction ``p`` means the block's
state is saved just before ``p`` executes, and a resumed block starts again at ``p``. The graph
here has one node per reachable instruction of the kernel body and an edge to every
instruction that may execute next (the next one in a basic block, the first instruction of
every successor block), built from :func:`kernelcheck.ir.cfg.control_flow_graph`.

:func:`window` gives the instructions a region started at ``s`` may execute before any thread
reaches another boundary: ``s`` itself and whatever a path from ``s`` reaches without entering a
boundary. Everything else in the package is phrased in terms of these windows.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

import networkx as nx

from kernelcheck.ir.cfg import ENTRY, EXIT, control_flow_graph
from kernelcheck.ir.nodes import Function, Module

__all__ = ["instruction_graph", "program_graph", "window", "inert_instructions"]


def instruction_graph(function: Function, cfg: nx.DiGraph | None = None) -> nx.DiGraph:
    """The successor graph of the reachable instructions of ``function``.

    Parameters
    ----------
    function : Function
        A kernel with a body.
    cfg : networkx.DiGraph, optional
        Its control-flow graph, when already built.

    Returns
    -------
    networkx.DiGraph
        Nodes: instruction indices reachable from the entry (attribute ``block``, the block
        index). The graph attribute ``entry`` is the first instruction executed (``None`` for
        an empty body).

    Examples
    --------
    >>> from kernelcheck.ptx.parser import parse_ptx
    >>> f = parse_ptx(".version 8.0\\n.target sm_90\\n.address_size 64\\n.entry k() {"
    ...     ".reg .pred %p<2>; @%p1 bra L; mov.u32 %r1, 1; L: ret; }").get_function("k")
    >>> sorted(instruction_graph(f).edges)
    [(0, 1), (0, 2), (1, 2)]
    """
    cfg = control_flow_graph(function) if cfg is None else cfg
    reached = nx.descendants(cfg, ENTRY)
    graph = nx.DiGraph(entry=None)
    first: dict[int, int | None] = {}
    blocks = {b.index: b for b in function.blocks}
    # A block without instructions (a label alone before the end) passes control through:
    # resolve each block to the first instruction control reaches from its start.
    for index in sorted(blocks):
        first[index] = blocks[index].first.index if blocks[index].instructions else None

    def targets(block: int) -> set[int]:
        out: set[int] = set()
        stack, seen = [block], set()
        while stack:
            node = stack.pop()
            if node in seen or node == EXIT:
                continue
            seen.add(node)
            head = first.get(node)
            if head is not None:
                out.add(head)
            else:
                stack.extend(cfg.successors(node))
        return out

    for index in sorted(n for n in reached if n != EXIT):
        block = blocks[index]
        instrs = block.instructions
        for instr in instrs:
            graph.add_node(instr.index, block=index)
        for a, b in zip(instrs, instrs[1:], strict=False):
            graph.add_edge(a.index, b.index)
        if instrs:
            for succ in cfg.successors(index):
                for head in targets(succ):
                    graph.add_edge(instrs[-1].index, head)
    entries = targets(next(iter(cfg.successors(ENTRY)))) if cfg.out_degree(ENTRY) else set()
    graph.graph["entry"] = min(entries) if entries else None
    return graph


def window(graph: nx.DiGraph, start: int, boundaries: Collection[int]) -> set[int]:
    """Instructions a region started at ``start`` may execute before reaching a boundary.

    ``start`` itself is included (the saved state resumes by executing it); every other
    instruction is included when a path from ``start`` reaches it without entering an
    instruction of ``boundaries``.

    Examples
    --------
    >>> g = nx.DiGraph([(0, 1), (1, 2), (2, 0)])
    >>> sorted(window(g, 0, {2}))
    [0, 1]
    """
    seen = {start}
    stack = [start]
    while stack:
        node = stack.pop()
        for succ in graph.successors(node):
            if succ not in seen and succ not in boundaries:
                seen.add(succ)
                stack.append(succ)
    return seen


def inert_instructions(graph: nx.DiGraph, accessing: Iterable[int]) -> frozenset[int]:
    """Instructions from which no instruction of ``accessing`` is reachable (nor themselves).

    A thread standing at such an instruction will never touch global memory again: it can be
    left where it is when the other threads of its block save a region boundary.

    Examples
    --------
    >>> g = nx.DiGraph([(0, 1), (1, 2)])
    >>> sorted(inert_instructions(g, {1}))
    [2]
    """
    live = set()
    stack = [n for n in accessing if n in graph]
    live.update(stack)
    while stack:
        node = stack.pop()
        for pred in graph.predecessors(node):
            if pred not in live:
                live.add(pred)
                stack.append(pred)
    return frozenset(n for n in graph if n not in live)


def _callee_name(instr) -> str | None:
    from kernelcheck.ir.nodes import Symbol

    operands = list(instr.operands)
    if operands and type(operands[0]).__name__ == "ParenList":
        operands.pop(0)
    return operands[0].name if operands and type(operands[0]) is Symbol else None


def program_graph(module: Module, function: Function, *, max_depth: int = 8) -> nx.DiGraph:
    """The successor graph of ``function`` with every device-function call inlined.

    Nodes are *sites*: tuples ``call_path + (index,)``, where ``call_path`` lists the
    ``call`` instructions (one per nesting level, the kernel's first) through which the
    instruction ``index`` of a callee runs; a kernel instruction is ``(index,)``. A call
    site's node leads into its callee's first instruction, and each ``ret`` of the callee
    leads to what follows the call. Calls without a body, indirect or recursive calls and
    calls nested deeper than ``max_depth`` stay plain nodes (the access analysis reports
    such kernels as not modelled).

    Node attributes: ``block`` (``(call_path, block index)``, a basic block of one inlined
    body) and ``function`` (its name). Graph attributes: ``entry`` (the first site, or
    ``None``) and ``functions`` (``call_path -> Function``).

    Examples
    --------
    >>> from kernelcheck.ptx.parser import parse_ptx
    >>> m = parse_ptx(".version 8.0\\n.target sm_90\\n.address_size 64\\n"
    ...     ".func f() { mov.u32 %r1, 1; ret; }\\n"
    ...     ".entry k() { .reg .b32 %r<2>; call f, (); ret; }")
    >>> sorted(program_graph(m, m.get_function("k")).edges)
    [((0,), (0, 0)), ((0, 0), (0, 1)), ((0, 1), (1,))]
    """
    graph = nx.DiGraph(entry=None, functions={})
    pending: list[tuple[tuple[int, ...], Function, tuple[str, ...]]] = [
        ((), function, (function.name,))]
    heads: dict[tuple[int, ...], int | None] = {}
    while pending:
        path, func, chain = pending.pop()
        graph.graph["functions"][path] = func
        local = instruction_graph(func)
        heads[path] = local.graph["entry"]
        for node, block in local.nodes(data="block"):
            graph.add_node(path + (node,), block=(path, block), function=func.name)
        graph.add_edges_from((path + (a,), path + (b,)) for a, b in local.edges)
        for node in local:
            instr = func.instructions[node]
            if instr.opcode != "call" or len(path) >= max_depth:
                continue
            name = _callee_name(instr)
            try:
                callee = module.get_function(name) if name else None
            except KeyError:
                callee = None
            if callee is None or callee.body is None or name in chain:
                continue
            pending.append((path + (node,), callee, chain + (name,)))
    entry = heads[()]
    graph.graph["entry"] = None if entry is None else (entry,)
    for call, head in heads.items():
        if not call or head is None:
            continue
        func = graph.graph["functions"][call]
        after = list(graph.successors(call))
        graph.remove_edges_from([(call, s) for s in after])
        graph.add_edge(call, call + (head,))
        for index in range(len(func.instructions)):
            site = call + (index,)
            if site in graph and func.instructions[index].opcode == "ret":
                graph.add_edges_from((site, s) for s in after)
    return graph
