"""DOT and JSON renderings of the graphs over the Kernel IR, for people and other tools.

Three views: the control-flow graph (blocks with their instructions as text), the same graph
with its natural loops drawn as nested clusters, and the def-use graph (one node per
instruction, one edge per register flowing from a definition to a use). JSON documents carry
``format_version`` so that readers can tell layouts apart.

Instructions are printed by the IR printer (:mod:`kernelcheck.ptx.printer`), so a graph
shows exactly the text the module prints as.
"""

from __future__ import annotations

import networkx as nx

from kernelcheck.ir.cfg import ENTRY, EXIT
from kernelcheck.ir.loops import Loop
from kernelcheck.ir.nodes import Address, Instruction, Register, Symbol  # noqa: F401 (doctests)

__all__ = [
    "FORMAT_VERSION",
    "format_operand",
    "format_instruction",
    "cfg_to_json",
    "cfg_to_dot",
    "loops_to_json",
    "loops_to_dot",
    "def_use_to_json",
    "def_use_to_dot",
]

#: Version of the JSON layouts written here.
FORMAT_VERSION = 1


def format_operand(operand) -> str:
    """Render one operand as PTX (or SASS) text, as the printer does.

    Examples
    --------
    >>> format_operand(Address(Register("%rd1"), 8))
    '[%rd1+8]'
    """
    from kernelcheck.ptx.printer import format_operand as _format

    return _format(operand)


def format_instruction(instr: Instruction) -> str:
    """Render one instruction as ``[@guard ]opcode.mods operand, ...;``.

    Examples
    --------
    >>> from kernelcheck.ir.nodes import Guard
    >>> format_instruction(Instruction("bra", ("uni",), (Symbol("L"),), guard=Guard("%p1", True)))
    '@!%p1 bra.uni L;'
    """
    from kernelcheck.ptx.printer import format_instruction as _format

    return _format(instr) + ";"


# --------------------------------------------------------------------------- CFG


def _node_id(node) -> str:
    return node if isinstance(node, str) else f"b{node}"


def _block_json(cfg: nx.DiGraph, node) -> dict:
    block = cfg.nodes[node].get("block")
    if block is None:
        return {"id": _node_id(node), "kind": node}
    return {
        "id": _node_id(node),
        "kind": "block",
        "index": block.index,
        "name": block.name,
        "labels": list(block.labels),
        "instructions": [
            {"index": i.index, "text": format_instruction(i)} for i in block.instructions
        ],
    }


def cfg_to_json(cfg: nx.DiGraph) -> dict:
    """The control-flow graph as a JSON-ready dict: ``nodes`` and ``edges``.

    Examples
    --------
    >>> g = nx.DiGraph(name="k"); g.add_node("entry", block=None)
    >>> g.add_node("exit", block=None); g.add_edge("entry", "exit", kind="fallthrough")
    >>> cfg_to_json(g)["edges"]
    [{'source': 'entry', 'target': 'exit', 'kind': 'fallthrough'}]
    """
    return {
        "format_version": FORMAT_VERSION,
        "graph": "cfg",
        "function": cfg.graph.get("name", ""),
        "nodes": [_block_json(cfg, n) for n in _ordered_nodes(cfg)],
        "edges": [
            {"source": _node_id(u), "target": _node_id(v), "kind": kind}
            for u, v, kind in cfg.edges(data="kind")
        ],
    }


def _ordered_nodes(cfg: nx.DiGraph) -> list:
    blocks = sorted(n for n in cfg if not isinstance(n, str))
    return [ENTRY, *blocks, EXIT]


def _dot_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("{", "\\{").replace(
        "}", "\\}").replace("|", "\\|").replace("<", "\\<").replace(">", "\\>")


def _dot_block_node(cfg: nx.DiGraph, node) -> str:
    block = cfg.nodes[node].get("block")
    if block is None:
        return f'  {_node_id(node)} [shape=oval, label="{node}"];'
    lines = [_dot_escape(f"{block.name}:")]
    lines += [_dot_escape(f"{i.index:>4}  {format_instruction(i)}") for i in block.instructions]
    label = "\\l".join(lines) + "\\l"
    return f'  {_node_id(node)} [shape=record, label="{{{label}}}"];'


_EDGE_STYLE = {"branch": "solid", "fallthrough": "dashed", "exit": "dotted"}


def _dot_edges(cfg: nx.DiGraph) -> list[str]:
    return [
        f'  {_node_id(u)} -> {_node_id(v)} [style={_EDGE_STYLE.get(kind, "solid")}, '
        f'label="{kind}"];'
        for u, v, kind in cfg.edges(data="kind")
    ]


def _dot_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def cfg_to_dot(cfg: nx.DiGraph) -> str:
    """The control-flow graph in Graphviz DOT, one record node per block.

    Examples
    --------
    >>> g = nx.DiGraph(name="k"); g.add_node("entry", block=None)
    >>> g.add_node("exit", block=None); g.add_edge("entry", "exit", kind="fallthrough")
    >>> print(cfg_to_dot(g).splitlines()[0])
    digraph "k" {
    """
    lines = [f"digraph {_dot_quote(cfg.graph.get('name', 'cfg'))} {{",
             "  node [fontname=monospace];"]
    lines += [_dot_block_node(cfg, n) for n in _ordered_nodes(cfg)]
    lines += _dot_edges(cfg)
    lines.append("}")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- loops


def _loop_json(loop: Loop) -> dict:
    return {
        "header": loop.header,
        "latches": list(loop.latches),
        "body": sorted(loop.body),
        "exits": [[_node_id(u), _node_id(v)] for u, v in loop.exits],
        "parent": loop.parent,
        "depth": loop.depth,
    }


def loops_to_json(cfg: nx.DiGraph, loops: tuple[Loop, ...], reducible: bool) -> dict:
    """The CFG with its natural loops and whether it is reducible, as a JSON-ready dict."""
    document = cfg_to_json(cfg)
    document["graph"] = "loops"
    document["reducible"] = reducible
    document["loops"] = [_loop_json(loop) for loop in loops]
    return document


def loops_to_dot(cfg: nx.DiGraph, loops: tuple[Loop, ...]) -> str:
    """The CFG in DOT with every natural loop drawn as a cluster, nested as the loops are."""
    children: dict[int | None, list[Loop]] = {}
    for loop in loops:
        children.setdefault(loop.parent, []).append(loop)
    in_loop = {n for loop in loops for n in loop.body}
    lines = [f"digraph {_dot_quote(cfg.graph.get('name', 'cfg'))} {{",
             "  node [fontname=monospace];"]
    lines += [_dot_block_node(cfg, n) for n in _ordered_nodes(cfg) if n not in in_loop]
    # Iterative walk of the loop forest: ("open", loop) writes a cluster and schedules its
    # children and a ("close", None); a block sits in the innermost loop containing it.
    stack: list[tuple[str, Loop | None]] = [("open", c) for c in reversed(children.get(None, []))]
    while stack:
        action, loop = stack.pop()
        if action == "close":
            lines.append("  }")
            continue
        lines.append(f"  subgraph cluster_loop_{loop.header} {{")
        lines.append(f'  label="loop header {_node_id(loop.header)} depth {loop.depth}";')
        inner = {n for c in children.get(loop.header, []) for n in c.body}
        lines += [_dot_block_node(cfg, n) for n in sorted(loop.body - inner)]
        stack.append(("close", None))
        stack.extend(("open", c) for c in reversed(children.get(loop.header, [])))
    lines += _dot_edges(cfg)
    lines.append("}")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- def-use


def _def_use_node_id(node) -> str:
    return node if isinstance(node, str) else f"i{node}"


def def_use_to_json(graph: nx.MultiDiGraph) -> dict:
    """The def-use graph as a JSON-ready dict: instruction ``nodes`` and register ``edges``."""
    nodes = []
    for node, instr in graph.nodes(data="instruction"):
        if instr is None:
            nodes.append({"id": _def_use_node_id(node), "kind": node})
        else:
            nodes.append({"id": _def_use_node_id(node), "kind": "instruction",
                          "index": instr.index, "text": format_instruction(instr)})
    return {
        "format_version": FORMAT_VERSION,
        "graph": "dataflow",
        "function": graph.graph.get("name", ""),
        "nodes": nodes,
        "edges": [
            {"source": _def_use_node_id(u), "target": _def_use_node_id(v), "register": reg}
            for u, v, reg in graph.edges(data="register")
        ],
    }


def def_use_to_dot(graph: nx.MultiDiGraph) -> str:
    """The def-use graph in DOT, one box per instruction, edges labelled with the register."""
    lines = [f"digraph {_dot_quote(graph.graph.get('name', 'dataflow'))} {{",
             "  node [fontname=monospace, shape=box];"]
    for node, instr in graph.nodes(data="instruction"):
        text = node if instr is None else f"{instr.index}: {format_instruction(instr)}"
        lines.append(f"  {_def_use_node_id(node)} [label={_dot_quote(text)}];")
    for u, v, reg in graph.edges(data="register"):
        lines.append(f"  {_def_use_node_id(u)} -> {_def_use_node_id(v)} "
                     f"[label={_dot_quote(reg)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"
