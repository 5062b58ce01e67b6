"""``kernelcheck graph`` on fixture PTX, through the command-line entry point."""

from __future__ import annotations

import json

import pytest

from kernelcheck.cli import main

from .conftest import FIXTURES

GRIDSTRIDE = str(FIXTURES / "sm_90" / "gridstride.ptx")


def test_cfg_as_dot(capsys):
    assert main(["graph", GRIDSTRIDE, "--kernel", "scale_gridstride"]) == 0
    out = capsys.readouterr().out
    assert out.startswith('digraph "scale_gridstride" {')
    assert out.count("digraph") == 1
    assert "b2 -> b2 [style=solid" in out          # the grid-stride back edge
    assert "ld.global.f32" in out and "entry -> b0" in out and "b3 -> exit" in out


def test_cfg_as_json_lists_blocks_and_edges(capsys):
    assert main(["graph", GRIDSTRIDE, "--kernel", "scale_gridstride", "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["graph"] == "cfg" and document["function"] == "scale_gridstride"
    assert [n["id"] for n in document["nodes"]] == ["entry", "b0", "b1", "b2", "b3", "exit"]
    assert {"source": "b2", "target": "b2", "kind": "branch"} in document["edges"]
    assert document["nodes"][4]["instructions"][0]["text"] == "ret;"


def test_loops_as_json(capsys):
    assert main(["graph", GRIDSTRIDE, "--kernel", "scale_gridstride", "--graph", "loops",
                 "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["reducible"] is True
    assert document["loops"] == [{"header": 2, "latches": [2], "body": [2],
                                  "exits": [["b2", "b3"]], "parent": None, "depth": 1}]


def test_loops_as_dot_draws_a_cluster(capsys):
    assert main(["graph", GRIDSTRIDE, "--kernel", "scale_gridstride", "--graph", "loops"]) == 0
    assert "subgraph cluster_loop_2 {" in capsys.readouterr().out


def test_dataflow_json_to_file(tmp_path):
    out = tmp_path / "du.json"
    assert main(["graph", GRIDSTRIDE, "--kernel", "scale_gridstride", "--graph", "dataflow",
                 "--format", "json", "-o", str(out)]) == 0
    document = json.loads(out.read_text())
    assert document["graph"] == "dataflow"
    # The induction variable %r10 flows around the loop: its add feeds itself.
    edges = {(e["source"], e["target"], e["register"]) for e in document["edges"]}
    add = next(n for n in document["nodes"] if n.get("text", "").startswith("add.s32 %r10"))
    assert (add["id"], add["id"], "%r10") in edges


def test_every_kernel_without_kernel_option(capsys):
    assert main(["graph", GRIDSTRIDE, "--graph", "dataflow"]) == 0
    assert capsys.readouterr().out.count("digraph") == 4


def test_unknown_kernel_is_one_line_and_exit_2(capsys):
    assert main(["graph", GRIDSTRIDE, "--kernel", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'nope'" in err and "scale_gridstride" in err


@pytest.mark.parametrize("flavour", ["O0G", "nvrtc", "triton", "numba"])
def test_every_fixture_flavour_renders(flavour, capsys):
    for path in sorted((FIXTURES / flavour).glob("*.ptx"))[:2]:
        for graph in ("cfg", "loops", "dataflow"):
            assert main(["graph", str(path), "--graph", graph, "--format", "json"]) == 0
            json.loads(capsys.readouterr().out)
