"""Regions of every fixture kernel: every clobber cut, no needless boundary, atomics isolated.

The checks rebuild the instruction successor graph from the CFG with networkx here, apart
from the package's own graph code, and search it for paths that would carry a clobber.
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


def _successors(function) -> nx.DiGraph:
    """Instruction successors, derived from the block CFG (every block here is non-empty)."""
    cfg = control_flow_graph(function)
    g = nx.DiGraph()
    for block in function.blocks:
        ins = [i.index for i in block.instructions]
        g.add_nodes_from(ins)
        g.add_edges_from(zip(ins, ins[1:], strict=False))
        for succ in cfg.successors(block.index):
            if succ != EXIT and ins:
                g.add_edge(ins[-1], cfg.nodes[succ]["block"].instructions[0].index)
    start = cfg.nodes[next(iter(cfg.successors(ENTRY)))]["block"]
    return g, start.instructions[0].index


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


@pytest.mark.parametrize("path,name", KERNELS, ids=_ids())
def test_every_clobber_is_cut_on_every_path(cache, path, name):
    module, function, regions, model = _load(cache, path, name)
    assert regions.status != "not_proven"
    g, entry = _successors(function)
    cuts = set(regions.positions)
    pairs = {(c.read.position, c.write.position) for c in model.clobbers if c.cuttable}
    for r, w in pairs:
        # Ordered, one thread: no path from the read reaches the write without a boundary.
        assert w not in _reach(g, r, cuts) - {r} or w == r, (r, w)
    # Unordered, a whole block: no region start reaches both.
    assert _broken(g, entry, cuts, pairs) == []


@pytest.mark.parametrize("path,name", KERNELS, ids=_ids())
def test_no_boundary_is_needless(cache, path, name):
    module, function, regions, model = _load(cache, path, name)
    g, entry = _successors(function)
    cuts = set(regions.positions)
    pairs = {(c.read.position, c.write.position) for c in model.clobbers if c.cuttable}
    forced = {b.position for b in regions.boundaries if b.after_atomic is not None}
    for b in cuts - forced:
        assert _broken(g, entry, cuts - {b}, pairs), f"boundary before #{b} cuts nothing"


@pytest.mark.parametrize("path,name", KERNELS, ids=_ids())
def test_idempotent_kernels_form_one_region(cache, path, name):
    module, function, regions, model = _load(cache, path, name)
    if analyze_kernel(module, function).kernel_class == "always":
        assert regions.status == "one_region"
        assert regions.boundaries == () and len(regions.regions) == 1
        assert set(regions.regions[0].instructions) == set(_successors(function)[0])


@pytest.mark.parametrize("path,name", KERNELS, ids=_ids())
def test_non_idempotent_atomics_are_followed_by_a_boundary(cache, path, name):
    module, function, regions, model = _load(cache, path, name)
    g, _ = _successors(function)
    for atom in model.atomics:
        for succ in g.successors(atom.position):
            assert succ in regions.positions
        holder = [r for r in regions.regions if atom.position in r.atomic]
        assert holder and all(atom.position in r.instructions for r in holder)


@pytest.mark.parametrize("path,name", [k for k in KERNELS if len(
    parse_ptx_file(k[0]).get_function(k[1]).instructions) <= 40], ids=lambda x: str(x)[-30:])
def test_small_kernels_get_a_proven_minimum(cache, path, name):
    """Brute force over every instruction position (not the gaps the search uses)."""
    module, function, regions, model = _load(cache, path, name)
    g, entry = _successors(function)
    pairs = {(c.read.position, c.write.position) for c in model.clobbers if c.cuttable}
    forced = {b.position for b in regions.boundaries if b.after_atomic is not None}
    extra = len(regions.positions) - len(forced)
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


def test_clobber_inside_one_call_is_reported_not_cut():
    module, function = _fixture("sm_80", "structs_calls.ptx", "noinline_accumulate")
    regions = kernel_regions(module, function)
    assert regions.status == "partly_cut" and not regions.resumable
    assert any(r.uncut for r in regions.regions)
    assert "NOT re-executable" in format_regions(regions)


def test_json_carries_regions_and_boundaries():
    module, function = _fixture("sm_80", "atomics.ptx", "atomic_add_all")
    data = kernel_regions(module, function).to_json()
    assert data["status"] == "cut" and data["format_version"] == 1
    after = [b for b in data["boundaries"] if b["after_atomic"] is not None]
    assert after and after[0]["position"] == after[0]["after_atomic"] + 1
    assert any(r["atomic"] for r in data["regions"])
