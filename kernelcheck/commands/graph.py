"""``kernelcheck graph FILE``: the control-flow, loop or def-use graph of PTX kernels.

Writes Graphviz DOT (one ``digraph`` per kernel) or JSON (one document per kernel, in a list
when there are several) to standard output or to ``-o OUT``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from kernelcheck.errors import KernelcheckError
from kernelcheck.ir.cfg import control_flow_graph
from kernelcheck.ir.dataflow import def_use_graph
from kernelcheck.ir.export import (
    cfg_to_dot,
    cfg_to_json,
    def_use_to_dot,
    def_use_to_json,
    loops_to_dot,
    loops_to_json,
)
from kernelcheck.ir.loops import is_reducible, natural_loops
from kernelcheck.ir.nodes import Function
from kernelcheck.ptx.parser import parse_ptx_file

GRAPHS = ("cfg", "dataflow", "loops")
FORMATS = ("dot", "json")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``graph`` sub-command."""
    parser = subparsers.add_parser(
        "graph",
        help="print the control-flow, loop or def-use graph of PTX kernels (DOT or JSON)",
        description="Build the control-flow graph (blocks and edges), its natural loops, "
        "or the register def-use graph of one kernel (or every kernel) of a PTX file.",
    )
    parser.add_argument("file", help="PTX file")
    parser.add_argument("--kernel", help="kernel or function name (default: every kernel)")
    parser.add_argument("--graph", choices=GRAPHS, default="cfg", help="which graph")
    parser.add_argument("--format", choices=FORMATS, default="dot", help="output format")
    parser.add_argument("-o", "--output", help="write here instead of standard output")
    parser.set_defaults(func=run)


def render(function: Function, graph: str, fmt: str) -> str | dict:
    """One function's graph as DOT text or a JSON-ready dict."""
    cfg = control_flow_graph(function)
    if graph == "cfg":
        return cfg_to_dot(cfg) if fmt == "dot" else cfg_to_json(cfg)
    if graph == "loops":
        loops = natural_loops(cfg)
        if fmt == "dot":
            return loops_to_dot(cfg, loops)
        return loops_to_json(cfg, loops, is_reducible(cfg))
    uses = def_use_graph(function, cfg)
    return def_use_to_dot(uses) if fmt == "dot" else def_use_to_json(uses)


def _select(module, name: str | None, path: str) -> tuple[Function, ...]:
    if name is None:
        if not module.kernels:
            raise KernelcheckError(f"{path}: no kernel with a body")
        return module.kernels
    try:
        function = module.get_function(name)
    except KeyError:
        known = ", ".join(f.name for f in module.functions if f.body is not None)
        raise KernelcheckError(
            f"{path}: no kernel or function named {name!r} (found: {known or 'none'})"
        ) from None
    if function.body is None:
        raise KernelcheckError(f"{path}: {name!r} is declared without a body")
    return (function,)


def run(args: argparse.Namespace) -> int:
    """Print or write the requested graph; exit status 0."""
    module = parse_ptx_file(args.file)
    functions = _select(module, args.kernel, args.file)
    rendered = [render(f, args.graph, args.format) for f in functions]
    if args.format == "dot":
        text = "".join(rendered)
    else:
        text = json.dumps(rendered[0] if len(rendered) == 1 else rendered, indent=2) + "\n"
    if args.output:
        try:
            Path(args.output).write_text(text)
        except OSError as error:
            raise KernelcheckError(f"cannot write {args.output}: {error.strerror}") from error
    else:
        sys.stdout.write(text)
    return 0
