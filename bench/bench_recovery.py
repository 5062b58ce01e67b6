"""Recovery and fault injection on every fixture workload: outcomes, saved bytes, overhead.

Run: ``python bench/bench_recovery.py [--trials 1000] [--seed 2026] [--out docs/recovery]
[--part all|campaign|sequence|floors]``

* Saved bytes at the floor (printed last, one table): per workload (the training-step
  sequence, verified per launch and per step, and the fixture mix), the bytes a full
  checkpoint of every written allocation takes, the bytes saved with the hull byte sets
  of the launch-time verdict (``affine_footprint=False``, the engine before affine
  narrowing), the bytes saved now (default engine, and the campaign's settings), the
  *floor* the emulator oracle measures for the same launches
  (:mod:`kernelcheck.recovery.report`) and saved over floor; then the fault campaign's
  detected faults recovered byte-exactly. ``--part floors`` prints the table without the
  campaign (about a minute).

* Campaigns: ``--trials`` trials per kernel group (register flips per NVBitFI group, double
  flips, store-value flips, memory flips after the launch, launch failures) over every
  expected.toml instance of every fixture kernel plus its disjoint placement, without and
  with recovery.
* Oracle check: for every target, the emulator trace of a clean run says which bytes are
  clobbered; a replay may only start from the state the plan restores if those bytes were
  saved (or the instance is idempotent).
* Saved bytes: per launch, the plan's bytes over the bytes of every allocation the launch
  writes (the whole-allocation checkpoint), next to the reference system's < 4 %.
* Application-like sequence (``--part sequence``): training steps on the emulator built from
  fixture kernels (a matmul, out-of-place elementwise ops, a block reduction, an in-place
  gradient scaling and an in-place optimizer update, a ping-pong stencil), one
  synchronization per step; saved bytes per launch over the bytes of every allocation it
  writes, per kernel.
* Overhead: planning plus snapshot, and detection (redundant execution), per launch, over the
  launch's own time on the emulator.
"""

from __future__ import annotations

import argparse
import dataclasses
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
from kernelcheck.recovery import EmulatorDevice, RecoveryConfig, RecoverySession  # noqa: E402
from kernelcheck.recovery.session import KernelModule  # noqa: E402

#: The campaign's recovery settings: redundant execution for every replayable instance, the
#: write guard, and saves of the bytes indirect writes may touch.
CONFIG = RecoveryConfig(redundant="replayable", write_guard=True, indirect_write_saves=True)
#: The same without the indirect-write saves (the default engine), for the saved-byte ratio.
LEAN = RecoveryConfig(redundant="replayable", write_guard=True)
#: The default engine with the hull byte sets (before the affine narrowing).
HULL = dataclasses.replace(LEAN, affine_footprint=False)

GROUPS = [("single", "G_FP32"), ("single", "G_FP64"), ("single", "G_LD"), ("single", "G_PR"),
          ("single", "G_OTHERS"), ("double", "G_GP"), ("store", "-"), ("mem-after", "-"),
          ("launch-fail", "-")]


def _specs():
    specs = []
    for k, spec in expected_kernels().items():
        specs += [(k, i, False) for i in range(len(spec["instances"]))] + [(k, 0, True)]
    return specs


def plans_and_oracle(campaign: Campaign, config: RecoveryConfig | None = None):
    """Per target: plan, saved bytes, written-allocation bytes, oracle agreement, timings,
    and detections in the clean run (a write guard that stops a correct run would show)."""
    config = config or campaign.config
    out = []
    for k in range(len(campaign.specs)):
        p = campaign.prepared(k)
        if p is None:
            continue
        t = p.target
        for _ in range(2):      # the first launch analyses the kernel; time the second
            t.reset()
            device = EmulatorDevice(t.emu, trace=True)
            session = RecoverySession(device, config, check_cache=campaign._checks)
            rec = session.launch(KernelModule(t.module, t.program), t.entry, grid=t.grid,
                                 block=t.block, params=t.values, shared_bytes=t.shared_bytes)
            false_alarms = len(session.report().detections)
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
                    "guarded": rec.write_guarded, "false_alarms": false_alarms,
                    "launch": rec.seconds_launch,
                    "snapshot": rec.seconds_plan + rec.seconds_save,
                    "detect": rec.seconds_detect})
    return out


def _launch_all(s, mods, n, big, bufs, lr):
    W, X, H, A, G, M, P, S1, S2 = bufs
    mm, ew, red, inp, st = mods
    nn = n * n
    e = ((nn + 255) // 256,)
    s.launch(mm, "matmul_tiled", grid=(n // 16, n // 16), block=(16, 16), params=[H, W, X, n])
    s.launch(ew, "relu_f32", grid=e, block=(256,), params=[A, H, nn])
    s.launch(red, "reduce_sum_block", grid=e, block=(256,), params=[P, A, nn])
    s.launch(ew, "saxpy", grid=e, block=(256,), params=[G, A, X, -1.0, nn])
    s.launch(inp, "inplace_scale", grid=e, block=(256,), params=[G, 0.5, nn])
    s.launch(inp, "inplace_scale", grid=e, block=(256,), params=[M, 0.9, nn])
    s.launch(ew, "saxpy", grid=e, block=(256,), params=[M, G, M, 1.0, nn])
    s.launch(ew, "saxpy", grid=e, block=(256,), params=[W, M, W, -lr, nn])
    b = ((big + 255) // 256,)
    for _ in range(2):
        s.launch(st, "jacobi_pingpong", grid=b, block=(256,), params=[S2, S1, big])
        s.launch(st, "jacobi_pingpong", grid=b, block=(256,), params=[S1, S2, big])


def training_sequence(steps: int = 3, n: int = 128, big: int = 1 << 18,
                      config: RecoveryConfig | None = None, sync: str = "step",
                      trace: bool = True) -> dict:
    """Saved bytes of an application-like launch sequence (see the module documentation).

    ``n`` x ``n`` f32 weights, inputs, activations and gradients (matmul ``H = W X``, ReLU,
    per-block sums, ``G = X - A`` scaled by 0.5 in place, momentum ``M = 0.9 M + G`` and
    ``W -= lr M`` in place), then two rounds of a ping-pong Jacobi stencil over ``big``
    floats; one synchronization per step (``sync="step"``: a launch also saves the bytes it
    overwrites that earlier launches of the step read) or after every launch
    (``sync="launch"``). With ``trace`` the emulator's oracle gives each launch's floor.
    """
    import numpy as np

    from kernelcheck.emu.emulator import Emulator
    ptx = Path(__file__).resolve().parents[1] / "fixtures" / "ptx" / "sm_80"
    emu = Emulator()
    device = EmulatorDevice(emu, trace=trace)
    nn = n * n
    sizes = [4 * nn] * 6 + [4 * ((nn + 255) // 256), 4 * big, 4 * big]
    bufs = [device.alloc(sz) for sz in sizes]
    rng = np.random.default_rng(0)
    for buf, sz in zip(bufs, sizes, strict=True):
        device.copy_htod(buf, rng.standard_normal(sz // 4).astype(np.float32).tobytes())
    session = RecoverySession(device, config or LEAN)
    if sync == "launch":
        plain = session.launch

        def launch(*args, **kw):
            record = plain(*args, **kw)
            session.synchronize()
            return record
        session.launch = launch
    mods = tuple(session.load_module((ptx / f"{f}.ptx").read_text()) for f in
                 ("shared_tiles", "elementwise", "reduction", "inplace", "stencil"))
    t0 = time.perf_counter()
    for _ in range(steps):
        _launch_all(session, mods, n, big, bufs, 0.01)
        session.synchronize()
    seconds = time.perf_counter() - t0
    launches = session.report().launches
    per: dict = {}
    for r in launches:
        d = per.setdefault(r.kernel, {"launches": 0, "saved": 0, "whole": 0, "floor": 0,
                                      "plans": set()})
        d["launches"] += 1
        d["saved"] += r.saved_bytes
        d["whole"] += r.written_allocation_bytes or 0
        d["floor"] = None if d["floor"] is None or r.floor_bytes is None else (
            d["floor"] + r.floor_bytes)
        d["plans"].add(r.plan_mode)
    saved = sum(r.saved_bytes for r in launches)
    whole = sum(r.written_allocation_bytes or 0 for r in launches)
    report = session.report()
    return {"sync": sync, "steps": steps, "n": n, "stencil_floats": big, "launches": len(launches),
            "saved_bytes": saved, "written_allocation_bytes": whole,
            "floor_bytes": report.floor_bytes, "floor_missed_bytes": report.floor_missed_bytes,
            "ratio": saved / whole, "seconds": seconds,
            "idempotent_launches": sum(r.verdict == "idempotent" for r in launches),
            "per_kernel": {k: {**v, "plans": sorted(v["plans"]),
                               "share_of_saved": v["saved"] / max(1, saved)}
                           for k, v in per.items()}}


def fixture_floors(campaign: Campaign) -> list[dict]:
    """Per fixture target, one clean launch per setting on a tracing emulator: the bytes of
    every allocation it writes, the floor (oracle), and per setting the bytes saved and the
    floor bytes left unsaved (0 for a sound plan)."""
    settings = (("hull", HULL), ("now", LEAN), ("campaign", CONFIG))
    out = []
    for k in range(len(campaign.specs)):
        p = campaign.prepared(k)
        if p is None:
            continue
        t = p.target
        row: dict = {"target": t.name}
        for name, config in settings:
            t.reset()
            device = EmulatorDevice(t.emu, trace=True)
            session = RecoverySession(device, config, check_cache=campaign._checks)
            rec = session.launch(KernelModule(t.module, t.program), t.entry, grid=t.grid,
                                 block=t.block, params=t.values, shared_bytes=t.shared_bytes)
            written = IntervalSet(device.traces[0].written_bytes.ranges)
            row["whole"] = sum(s for b, s in device.allocations()
                               if written & IntervalSet(((b, b + s),)))
            row["floor"] = rec.floor_bytes
            row["verdict"] = rec.verdict
            row[name] = rec.saved_bytes
            row[name + "_missed"] = rec.floor_missed_bytes
        out.append(row)
    return out


def floor_rows(sequences, fixtures) -> list[dict]:
    """The side-by-side rows: per workload, full checkpoint, saved (hull, now, campaign),
    floor."""
    rows = []
    for x in sequences:
        rows.append({"workload": f"training step, verified per {x['sync']}",
                     "launches": x["launches"], "full": x["written_allocation_bytes"],
                     "hull": x["hull_saved_bytes"], "now": x["saved_bytes"], "campaign": None,
                     "floor": x["floor_bytes"], "missed": x["floor_missed_bytes"]})
    rows.append({"workload": "fixture mix, one launch per target", "launches": len(fixtures),
                 **{k: sum(r[k] for r in fixtures)
                    for k in ("hull", "now", "campaign", "floor")},
                 "full": sum(r["whole"] for r in fixtures),
                 "missed": sum(r[k] for r in fixtures
                               for k in ("hull_missed", "now_missed", "campaign_missed"))})
    return rows


def format_floor_table(rows, recovered: tuple[int, int] | None = None) -> str:
    def ratio(a, b):
        return "-" if a is None or not b else f"{a / b:.2f}x"

    def share(a, b):
        return "-" if a is None or not b else f"{a:,} ({a / b:.1%})"

    lines = ["| workload | launches | full checkpoint bytes | saved, hull byte sets | "
             "saved now | saved now, campaign settings | floor (oracle) | hull / floor | "
             "now / floor | campaign / floor | floor bytes unsaved |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['workload']} | {r['launches']} | {r['full']:,} | "
                     f"{share(r['hull'], r['full'])} | {share(r['now'], r['full'])} | "
                     f"{share(r['campaign'], r['full'])} | {share(r['floor'], r['full'])} | "
                     f"{ratio(r['hull'], r['floor'])} | {ratio(r['now'], r['floor'])} | "
                     f"{ratio(r['campaign'], r['floor'])} | {r['missed']} |")
    if recovered is not None:
        done, detected = recovered
        lines.append(f"\ndetected faults recovered byte-exactly (campaign settings): "
                     f"{done} / {detected} ({done / max(1, detected):.2%})")
    return "\n".join(lines)


def excess(fixtures, top: int = 12) -> str:
    """The fixture targets whose saved bytes exceed the floor most (default engine)."""
    rows = sorted(fixtures, key=lambda r: r["floor"] - r["now"])[:top]
    return "\n".join(f"  {r['target']:40.40s} {r['verdict']:15s} saved {r['now']:7d} "
                      f"floor {r['floor']:7d}" for r in rows if r["now"] > r["floor"])


def sequences() -> list[dict]:
    """The training-step sequence per launch and per step, with and without affine
    narrowing of the clobbered sets."""
    out = []
    for sync in ("launch", "step"):
        x = training_sequence(sync=sync)
        x["hull_saved_bytes"] = training_sequence(sync=sync, config=HULL,
                                                  trace=False)["saved_bytes"]
        out.append(x)
    return out


def _ratios(plans) -> dict:
    writing = [p for p in plans if p["whole"] > 0]
    clob = [p for p in writing if p["plan"] == "clobbered"]
    return {"aggregate": sum(p["saved"] for p in writing) / sum(p["whole"] for p in writing),
            "mean_per_launch": statistics.mean(p["saved"] / p["whole"] for p in writing),
            "clobbering_launches": sum(p["saved"] for p in clob)
            / max(1, sum(p["whole"] for p in clob))}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=1000, help="trials per kernel group")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--out", default="docs/recovery", help="output stem (csv, json, png)")
    ap.add_argument("--part", choices=("all", "campaign", "sequence", "floors"),
                    default="all")
    args = ap.parse_args()
    seq = []
    if args.part in ("all", "sequence", "floors"):
        seq = sequences()
        for x in seq:
            print(x["sync"], f"{x['ratio']:.2%}",
                  {k: f"{v['share_of_saved']:.0%}" for k, v in x["per_kernel"].items()})
        Path(args.out).with_name(Path(args.out).name + "_sequence.json").write_text(
            json.dumps(seq, indent=1))
        if args.part == "sequence":
            return 0
    campaign = Campaign(_specs(), CONFIG)
    floors = []
    if args.part in ("all", "floors"):
        floors = fixture_floors(campaign)
        Path(args.out).with_name(Path(args.out).name + "_floors.json").write_text(
            json.dumps(floors, indent=1))
        print("fixture targets saving most above the floor (default engine):")
        print(excess(floors))
        if args.part == "floors":
            print(format_floor_table(floor_rows(seq, floors)))
            return 0
    start = time.perf_counter()
    plans = plans_and_oracle(campaign)
    lean = plans_and_oracle(campaign, LEAN)
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
    ratios = {name: _ratios(ps) for name, ps in (("campaign", plans), ("default", lean))}
    snap = statistics.median(p["snapshot"] / p["launch"] for p in plans)
    det = statistics.median(p["detect"] / p["launch"] for p in plans)
    summary = {
        "trials": len(rows), "targets": len(plans),
        "detected": len(detected), "recovered": recovered,
        "replay_targets": len(replay_targets), "replays_from_non_re_executable_state": len(bad),
        "oracle_disagreements_any_target": sum(p["oracle_ok"] is False for p in plans),
        "saved_ratios": ratios,
        "write_guarded_targets": sum(p["guarded"] for p in plans),
        "false_alarms_in_clean_runs": sum(p["false_alarms"] for p in plans + lean),
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
    if floors:
        print(format_floor_table(floor_rows(seq, floors), (recovered, len(detected))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
