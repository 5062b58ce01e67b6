"""Regions of every fixture kernel: every clobber cut, no needless boundary, atomics isolated.

The checks rebuild the instruction successor graph from the CFG with networkx here, apart
from the package's own graph code (device-function calls inlined per call site, nodes are
sites ``call_path + (index,)``), and search it for paths that would carry a clobber.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import networkx as nx
import pytest

from kernelcheck.analysis.summary import analyze_kernel
from kernelcheck.ir.cfg import ENTRY, EXIT, control_flow_graph
from kernelcheck.ptx.parser import parse_ptx_file
from kernelcheck.regions import clobber_model, format_regions, kernel_regions

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted((ROOT / "fixtures" / "ptx" / "sm_80").glob("*.ptx")) + sorted(
    (ROOT / "fixtures" / "ptx" / "sm_90").glob("*.ptx"))
KERNELS = [(path, k.name) for path in FILES for k in parse_ptx_file(path).kernels]


def _ids():
    return [f"{p.parent.name}-{n[:40]}" for p, n in KERNELS]


def _body(function, path) -> tuple[nx.DiGraph, tuple]:
    """Instruction successors of one body, from the block CFG (every block is non-empty)."""
    cfg = control_flow_graph(function)
    g = nx.DiGraph()
    for block in function.blocks:
        ins = [path + (i.index,) for i in block.instructions]
        g.add_nodes_from(ins)
        g.add_edges_from(zip(ins, ins[1:], strict=False))
        for succ in cfg.successors(block.index):
            if succ != EXIT and ins:
                g.add_edge(ins[-1], path + (cfg.nodes[succ]["block"].instructions[0].index,))
    start = cfg.nodes[next(iter(cfg.successors(ENTRY)))]["block"]
    return g, path + (start.instructions[0].index,)


def _successors(function, module=None, path=()):
    """Sites and their successors, every call with a body replaced by its callee's body."""
    g, entry = _body(function, path)
    if module is None:
        return g, entry
    for instr in function.instructions:
        callee = next((o.name for o in instr.operands if type(o).__name__ == "Symbol"), None)
        if instr.opcode != "call" or path + (instr.index,) not in g:
            continue
        body = module.get_function(callee)
        if body is None or body.body is None:
            continue  # an external function (``__assertfail``): no sites inside
        inner, head = _successors(body, module, path + (instr.index,))
        site = path + (instr.index,)
        after = list(g.successors(site))
        g.remove_edges_from([(site, a) for a in after])
        g.add_edges_from(inner.edges)
        g.add_edge(site, head)
        for node in inner:
            if len(node) == len(site) + 1 and body.instructions[node[-1]].opcode == "ret":
                g.add_edges_from((node, a) for a in after)
    return g, entry


def _reach(g: nx.DiGraph, start: int, cuts: set[int]) -> set[int]:
    """``start`` and what it reaches without entering an instruction of ``cuts``."""
    h = g.copy()
    h.remove_edges_from([(u, v) for u, v in g.edges if v in cuts])
    return {start} | nx.descendants(h, start)


def _broken(g, entry, cuts, pairs) -> list:
    bad = []
    for s in [entry, *sorted(cuts)]:
        seen = _reach(g, s, set(cuts))
        bad += [p for p in pairs if p[0] in seen and p[1] in seen]
    return bad


@pytest.fixture(scope="module")
def cache():
    return {}


def _load(cache, path, name):
    if (path, name) not in cache:
        module = parse_ptx_file(path)
        function = module.get_function(name)
        cache[(path, name)] = (module, function, kernel_regions(module, function),
                               clobber_model(module, function))
    return cache[(path, name)]


def _pairs(model) -> set:
    return {(c.read.site, c.write.site) for c in model.clobbers if c.cuttable}


@pytest.mark.parametrize("path,name", KERNELS, ids=_ids())
def test_every_clobber_is_cut_on_every_path(cache, path, name):
    module, function, regions, model = _load(cache, path, name)
    assert regions.status not in ("not_proven", "partly_cut")
    assert all(c.cuttable for c in model.clobbers)
    g, entry = _successors(function, module)
    cuts = set(regions.sites)
    pairs = _pairs(model)
    for r, w in pairs:
        # Ordered, one thread: no path from the read reaches the write without a boundary.
        assert w not in _reach(g, r, cuts) - {r} or w == r, (r, w)
    # Unordered, a whole block: no region start reaches both.
    assert _broken(g, entry, cuts, pairs) == []


@pytest.mark.parametrize("path,name", KERNELS, ids=_ids())
def test_no_boundary_is_needless(cache, path, name):
    module, function, regions, model = _load(cache, path, name)
    g, entry = _successors(function, module)
    cuts = set(regions.sites)
    pairs = _pairs(model)
    forced = {b.site for b in regions.boundaries if b.after_atomic is not None}
    for b in cuts - forced:
        assert _broken(g, entry, cuts - {b}, pairs), f"boundary before #{b} cuts nothing"


@pytest.mark.parametrize("path,name", KERNELS, ids=_ids())
def test_idempotent_kernels_form_one_region(cache, path, name):
    module, function, regions, model = _load(cache, path, name)
    if analyze_kernel(module, function).kernel_class == "always":
        assert regions.status == "one_region"
        assert regions.boundaries == () and len(regions.regions) == 1
        assert set(regions.regions[0].sites) == set(_successors(function, module)[0])


@pytest.mark.parametrize("path,name", KERNELS, ids=_ids())
def test_non_idempotent_atomics_are_followed_by_a_boundary(cache, path, name):
    module, function, regions, model = _load(cache, path, name)
    g, _ = _successors(function, module)
    for atom in model.atomics:
        for succ in g.successors(atom.site):
            assert succ in regions.sites
        holder = [r for r in regions.regions if atom.position in r.atomic]
        assert holder and all(atom.position in r.instructions for r in holder)


@pytest.mark.parametrize("path,name", [k for k in KERNELS if len(
    parse_ptx_file(k[0]).get_function(k[1]).instructions) <= 40], ids=lambda x: str(x)[-30:])
def test_small_kernels_get_a_proven_minimum(cache, path, name):
    """Brute force over every instruction position (not the gaps the search uses)."""
    module, function, regions, model = _load(cache, path, name)
    g, entry = _successors(function, module)
    pairs = _pairs(model)
    forced = {b.site for b in regions.boundaries if b.after_atomic is not None}
    extra = len(regions.sites) - len(forced)
    assert regions.optimal
    spots = [n for n in g if n != entry and n not in forced]
    for k in range(extra):
        for combo in itertools.combinations(spots, k):
            assert _broken(g, entry, forced | set(combo), pairs), combo


def _fixture(flavour: str, file: str, name: str):
    module = parse_ptx_file(ROOT / "fixtures" / "ptx" / flavour / file)
    return module, module.get_function(name)


@pytest.mark.parametrize("flavour", ["sm_80", "sm_90"])
def test_a_clobber_at_the_end_gets_exactly_one_boundary(flavour):
    module, function = _fixture(flavour, "inplace.ptx", "inplace_add_one")
    regions = kernel_regions(module, function)
    (boundary,) = regions.boundaries
    load = next(i.index for i in function.instructions if i.full_opcode.startswith("ld.global"))
    store = next(i.index for i in function.instructions
                 if i.full_opcode.startswith("st.global"))
    assert load < boundary.position <= store
    assert len(regions.regions) == 2
    assert any("ld.global" in c and "st.global" in c for c in boundary.cuts)
    assert boundary.live_bytes == sum(4 if r.startswith("%f") else 8
                                      for r in boundary.live_registers)


@pytest.mark.parametrize("name", ["noinline_accumulate", "noinline_store_scaled"])
def test_a_clobber_inside_a_call_is_cut_inside_the_callee(name):
    module, function = _fixture("sm_80", "structs_calls.ptx", name)
    regions = kernel_regions(module, function)
    assert regions.status == "cut" and regions.resumable and regions.optimal
    (boundary,) = regions.boundaries
    callee = module.get_function(boundary.function)
    call = function.instructions[boundary.call_path[0]]
    assert call.opcode == "call" and boundary.function != function.name
    # Between the callee's load and its store; the kernel frame's state is saved too.
    load = next(i.index for i in callee.instructions if i.full_opcode.startswith("ld.global"))
    store = next(i.index for i in callee.instructions
                 if i.full_opcode.startswith("st.global"))
    assert load < boundary.position <= store
    assert [f for f, _ in boundary.frames] == [function.name, callee.name]
    text = format_regions(regions)
    assert f"in {callee.name} via call #{call.index}" in text
    assert "NOT re-executable" not in text


def test_json_carries_regions_and_boundaries():
    module, function = _fixture("sm_80", "atomics.ptx", "atomic_add_all")
    data = kernel_regions(module, function).to_json()
    assert data["status"] == "cut" and data["format_version"] == 1
    after = [b for b in data["boundaries"] if b["after_atomic"] is not None]
    assert after and after[0]["position"] == after[0]["after_atomic"] + 1
    assert any(r["atomic"] for r in data["regions"])
