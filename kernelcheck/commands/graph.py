"""``kernelcheck graph FILE``: the control-flow, loop or def-use graph of PTX kernels.

Writes Graphviz DOT (one ``digraph`` per kernel) or JSON (one document per kernel, in a list
when there are several) to standard output or to ``-o OUT``.
"""

from __future__ import annotations

import argparse
import json

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

GRAPHS = ("cfg", "dataflow", "loops")
FORMATS = ("dot", "json")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``graph`` sub-command."""
    from kernelcheck.commands.common import add_output, examples

    parser = subparsers.add_parser(
        "graph",
        epilog=examples("kernelcheck graph kernels.ptx --kernel vec_add --graph loops "
                        "--format json -o loops.json"),
        help="print the control-flow, loop or def-use graph of PTX kernels (DOT or JSON)",
        description="Build the control-flow graph (blocks and edges), its natural loops, "
        "or the register def-use graph of one kernel (or every kernel) of a PTX file.",
    )
    parser.add_argument("files", nargs="+", metavar="FILE",
                        help="PTX files (or binaries that embed PTX), directories, quoted "
                             "globs, or '-' for standard input")
    parser.add_argument("--kernel", metavar="PATTERN",
                        help="kernel or function: mangled, demangled, short or template name, "
                             "or a regular expression (default: every kernel)")
    parser.add_argument("--graph", choices=GRAPHS, default="cfg", help="which graph")
    parser.add_argument("--format", choices=FORMATS, default="dot", help="output format")
    add_output(parser, "the graph")
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
    from kernelcheck.names import match_kernels

    defined = [f for f in module.functions if f.body is not None]
    chosen = set(match_kernels(name, [f.name for f in defined]))
    if not chosen:
        known = ", ".join(f.name for f in defined[:20])
        raise KernelcheckError(
            f"{path}: no kernel or function matches {name!r} (found: {known or 'none'})")
    return tuple(f for f in defined if f.name in chosen)


def _ptx_modules(item) -> list:
    """The PTX modules of one input: the file itself, or the PTX a binary embeds."""
    from kernelcheck.inputs import load_input

    loaded = load_input(item.path, prefer="ptx", data=item.data)
    modules = [e.module for e in loaded.modules if e.language == "ptx"]
    if not modules:
        raise KernelcheckError(f"{item.path}: graphs are built from PTX, and this input has "
                               f"only SASS (give the .ptx, or a binary that embeds PTX)")
    return modules


def run(args: argparse.Namespace) -> int:
    """Print or write the requested graphs; exit status 0."""
    from kernelcheck.inputs import expand_inputs
    from kernelcheck.output.files import check_writable, open_output

    if args.output not in (None, "-"):
        check_writable(args.output, "--output")
    rendered = []
    known: list[str] = []
    for item in expand_inputs(args.files):
        for module in _ptx_modules(item):
            known += [f.name for f in module.functions if f.body is not None]
            try:
                functions = _select(module, args.kernel, item.path)
            except KernelcheckError:
                if args.kernel is None:
                    raise
                continue
            rendered += [render(f, args.graph, args.format) for f in functions]
    if not rendered:
        shown = ", ".join(known[:20]) + (" ..." if len(known) > 20 else "")
        raise KernelcheckError(f"{', '.join(args.files)}: no kernel or function matches "
                               f"{args.kernel!r} (found: {shown or 'none'})")
    if args.format == "dot":
        text = "".join(rendered)
    else:
        text = json.dumps(rendered[0] if len(rendered) == 1 else rendered, indent=2) + "\n"
    with open_output(args.output) as out:
        out.write(text)
    return 0
