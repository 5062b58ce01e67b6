"""Recovery and fault injection on every fixture workload: outcomes, saved bytes, overhead.

Run: ``python bench/bench_recovery.py [--trials 1000] [--seed 2026] [--out docs/recovery]``

* Campaigns: ``--trials`` trials per kernel group (register flips per NVBitFI group, double
  flips, store-value flips, memory flips after the launch, launch failures) over every
  expected.toml instance of every fixture kernel plus its disjoint placement, without and
  with recovery.
* Oracle check: for every target, the emulator trace of a clean run says which bytes are
  clobbered; a replay may only start from the state the plan restores if those bytes were
  saved (or the instance is idempotent).
* Saved bytes: per launch, the plan's bytes over the bytes of every allocation the launch
  writes (the whole-allocation checkpoint), next to the reference system's < 4 %.
* Overhead: planning plus snapshot, and detection (redundant execution), per launch, over the
  launch's own time on the emulator.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kernelcheck.analysis.intervals import IntervalSet  # noqa: E402
from kernelcheck.faults.campaign import Campaign, outcome_table  # noqa: E402
from kernelcheck.faults.report import format_table, write_figure, write_results  # noqa: E402
from kernelcheck.faults.targets import expected_kernels  # noqa: E402
from kernelcheck.recovery import EmulatorDevice, RecoverySession  # noqa: E402
from kernelcheck.recovery.session import KernelModule  # noqa: E402

GROUPS = [("single", "G_FP32"), ("single", "G_FP64"), ("single", "G_LD"), ("single", "G_PR"),
          ("single", "G_OTHERS"), ("double", "G_GP"), ("store", "-"), ("mem-after", "-"),
          ("launch-fail", "-")]


def _specs():
    specs = []
    for k, spec in expected_kernels().items():
        specs += [(k, i, False) for i in range(len(spec["instances"]))] + [(k, 0, True)]
    return specs


def plans_and_oracle(campaign: Campaign):
    """Per target: plan, saved bytes, written-allocation bytes, oracle agreement, timings."""
    out = []
    for k in range(len(campaign.specs)):
        p = campaign.prepared(k)
        if p is None:
            continue
        t = p.target
        for _ in range(2):      # the first launch analyses the kernel; time the second
            t.reset()
            device = EmulatorDevice(t.emu, trace=True)
            session = RecoverySession(device, campaign.config, check_cache=campaign._checks)
            rec = session.launch(KernelModule(t.module, t.program), t.entry, grid=t.grid,
                                 block=t.block, params=t.values, shared_bytes=t.shared_bytes)
        trace = device.traces[0]
        allocs = device.allocations()
        written = IntervalSet(trace.written_bytes.ranges)
        whole = sum(s for b, s in allocs if written & IntervalSet(((b, b + s),)))
        saved = IntervalSet(session._log[0].plan.ranges) if session._log else IntervalSet()
        clobbered = IntervalSet(trace.clobbered.ranges)
        if rec.plan_mode == "unrecoverable":
            sound = None
        elif rec.verdict == "idempotent":
            sound = trace.idempotent
        else:
            sound = not (clobbered - saved)
        out.append({"target": t.name, "verdict": rec.verdict, "plan": rec.plan_mode,
                    "saved": rec.saved_bytes, "whole": whole, "oracle_ok": sound,
                    "launch": rec.seconds_launch,
                    "snapshot": rec.seconds_plan + rec.seconds_save,
                    "detect": rec.seconds_detect})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=1000, help="trials per kernel group")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--out", default="docs/recovery", help="output stem (csv, json, png)")
    args = ap.parse_args()
    campaign = Campaign(_specs())
    start = time.perf_counter()
    plans = plans_and_oracle(campaign)
    print(f"{len(plans)} targets prepared in {time.perf_counter() - start:.0f} s")
    rows = []
    for model, group in GROUPS:
        t0 = time.perf_counter()
        rows += campaign.run(args.trials, args.seed, model, [group])
        print(f"  {model:12s} {group:9s} {time.perf_counter() - t0:6.1f} s", flush=True)
    print(format_table(rows))
    detected = [r for r in rows if r.detected_by]
    recovered = sum(r.recovered_outcome == "recovered" for r in detected)
    replay_targets = {r.target for r in rows if r.replayed}
    bad = [p for p in plans if p["target"] in replay_targets and p["oracle_ok"] is False]
    writing = [p for p in plans if p["whole"] > 0]
    ratio_all = sum(p["saved"] for p in writing) / sum(p["whole"] for p in writing)
    mean_ratio = statistics.mean(p["saved"] / p["whole"] for p in writing)
    clob = [p for p in writing if p["plan"] == "clobbered"]
    clob_ratio = sum(p["saved"] for p in clob) / max(1, sum(p["whole"] for p in clob))
    snap = statistics.median(p["snapshot"] / p["launch"] for p in plans)
    det = statistics.median(p["detect"] / p["launch"] for p in plans)
    summary = {
        "trials": len(rows), "targets": len(plans),
        "detected": len(detected), "recovered": recovered,
        "replay_targets": len(replay_targets), "replays_from_non_re_executable_state": len(bad),
        "oracle_disagreements_any_target": sum(p["oracle_ok"] is False for p in plans),
        "saved_over_written_allocations": ratio_all, "mean_ratio_per_launch": mean_ratio,
        "ratio_clobbering_launches": clob_ratio,
        "plans": {m: sum(p["plan"] == m for p in plans) for m in
                  ("nothing", "clobbered", "written_allocations", "all_allocations")},
        "median_snapshot_over_launch": snap, "median_detection_over_launch": det,
        "table": outcome_table(rows),
    }
    print(json.dumps({k: v for k, v in summary.items() if k != "table"}, indent=1))
    stem = Path(args.out)
    write_results(rows, stem, {"seed": args.seed, "trials_per_group": args.trials,
                               "summary": summary})
    print(write_figure(rows, stem.with_suffix(".png"),
                       "Fixture workloads: outcomes by kernel group "
                       "(left: no recovery; right, hatched: with recovery)"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
