"""A reduced campaign over fixture kernels: every detected fault is recovered to the golden
output, replays start only from re-executable states, and the CLI writes its files."""

from __future__ import annotations

import json

import pytest

from kernelcheck.cli import main
from kernelcheck.faults.campaign import Campaign

KERNELS = ["vec_add", "saxpy", "inplace_add_one", "atomic_add_all", "gather_f32",
           "histogram256_global", "scale_gridstride", "_Z5axpbyIdEvPT_PKS0_S3_S0_S0_i",
           "reduce_sum_block", "stencil1d_3pt", "transpose_tiled", "daxpy_inplace"]
SPECS = [(k, 0, False) for k in KERNELS] + [(k, 0, True) for k in KERNELS]


@pytest.fixture(scope="module")
def campaign():
    return Campaign(SPECS)


@pytest.mark.parametrize("model,groups,trials", [
    ("single", ["G_FP32", "G_FP64", "G_LD", "G_PR", "G_OTHERS"], 120),
    ("double", ["G_GP"], 40),
    ("store", ["-"], 30),
    ("mem-after", ["-"], 20),
    ("launch-fail", ["-"], 20),
])
def test_every_detected_fault_is_recovered(campaign, model, groups, trials):
    rows = campaign.run(trials, 2026, model, groups)
    assert len(rows) >= 0.8 * trials
    assert len({r.kernel for r in rows}) >= 6
    detected = [r for r in rows if r.detected_by]
    assert detected
    assert all(r.recovered_outcome == "recovered" for r in detected), [
        (r.target, r.fault, r.detected_by) for r in detected if r.recovered_outcome !=
        "recovered"]
    # Without recovery the same faults were not all harmless.
    assert any(r.outcome != "masked" for r in rows)


def test_idempotent_instances_save_nothing_and_clobbering_ones_save_less_than_all(campaign):
    rows = campaign.run(40, 5, "launch-fail", ["-"])
    for r in rows:
        if r.verdict == "idempotent":
            assert r.saved_bytes == 0
        elif r.plan == "clobbered":
            assert 0 < r.saved_bytes <= r.written_allocation_bytes
    assert {r.verdict for r in rows} >= {"idempotent", "not_idempotent"}


def test_inject_command_writes_table_csv_json(tmp_path, capsys):
    stem = tmp_path / "camp"
    code = main(["inject", "saxpy", "--model", "single", "--groups", "G_FP32,G_LD",
                 "--trials", "12", "--seed", "4", "--recover", "--out", str(stem),
                 "--no-figure"])
    assert code == 0
    out = capsys.readouterr().out
    assert "G_FP32" in out and "rec:recovered" in out
    data = json.loads(stem.with_suffix(".json").read_text())
    assert data["seed"] == 4 and len(data["trials"]) == 12
    assert stem.with_suffix(".csv").read_text().count("\n") == 13
