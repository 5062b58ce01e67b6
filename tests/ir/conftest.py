"""Shared helpers for the graph tests: fixture kernels by name and PTX snippets."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from kernelcheck.ir.cfg import control_flow_graph
from kernelcheck.ptx.parser import parse_ptx, parse_ptx_file

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "ptx"

HEADER = ".version 8.0\n.target sm_90\n.address_size 64\n"


@cache
def _module(path: str):
    return parse_ptx_file(path)


def fixture_function(name: str, ptx: str, flavour: str = "sm_90"):
    """The function ``name`` of ``fixtures/ptx/<flavour>/<ptx>.ptx``."""
    return _module(str(FIXTURES / flavour / f"{ptx}.ptx")).get_function(name)


def snippet(body: str, params: str = "", name: str = "k"):
    """A kernel made of ``body`` (declarations and instructions) parsed into a Function."""
    return parse_ptx(f"{HEADER}.visible .entry {name}({params})\n{{\n{body}\n}}\n").get_function(
        name)


def block_names(function) -> dict:
    """Block index → block name, sentinels mapped to themselves."""
    names = {b.index: b.name for b in function.blocks}
    return lambda node: names.get(node, node)


def named_edges(function, cfg=None) -> set:
    """The CFG edges as (source name, target name, kind)."""
    cfg = control_flow_graph(function) if cfg is None else cfg
    name = block_names(function)
    return {(name(u), name(v), kind) for u, v, kind in cfg.edges(data="kind")}
