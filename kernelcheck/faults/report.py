"""Campaign output: the outcome table as text, CSV and JSON files, and the outcome figure.

The figure (outcome shares by instruction group, without and with recovery) needs
matplotlib, the optional ``kernelcheck[plot]`` extra; without it :func:`write_figure` says
why it skipped the figure and writes nothing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from kernelcheck.faults.campaign import (
    OUTCOMES,
    RECOVERY_OUTCOMES,
    TrialResult,
    outcome_table,
    to_csv,
)

__all__ = ["format_table", "write_results", "write_figure"]


def format_table(rows: Sequence[TrialResult]) -> str:
    """The outcome table as aligned text, one line per (model, group)."""
    table = outcome_table(rows)
    recover = any(r.recovered_outcome for r in rows)
    head = ["model", "group", "trials", *OUTCOMES]
    if recover:
        head += [f"rec:{o}" for o in RECOVERY_OUTCOMES]
    lines = [head]
    for t in table:
        line = [t["model"], t["group"], str(t["trials"]), *(str(t[o]) for o in OUTCOMES)]
        if recover:
            line += [str(t[f"rec_{o}"]) for o in RECOVERY_OUTCOMES]
        lines.append(line)
    widths = [max(len(line[k]) for line in lines) for k in range(len(head))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True))
                     for line in lines)


def write_results(rows: Sequence[TrialResult], stem: Path, meta: dict) -> tuple[Path, Path]:
    """Write ``stem.csv`` (one row per trial) and ``stem.json`` (settings, table, trials),
    each whole or not at all (:mod:`kernelcheck.output.files`)."""
    from kernelcheck.output.files import write_atomic

    csv_path, json_path = stem.with_suffix(".csv"), stem.with_suffix(".json")
    write_atomic(csv_path, to_csv(rows), "-o")
    write_atomic(json_path, json.dumps({**meta, "table": outcome_table(rows),
                                        "trials": [asdict(r) for r in rows]}, indent=1), "-o")
    return csv_path, json_path


_COLOURS = {"masked": "#9ecae1", "SDC": "#de2d26", "DUE": "#fd8d3c",
            "recovered": "#31a354", "unrecovered": "#756bb1"}


def write_figure(rows: Sequence[TrialResult], path: Path, title: str = "") -> str:
    """Draw outcome shares per group (bars without and with recovery); returns a status line."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "figure skipped: matplotlib is not installed (pip install 'kernelcheck[plot]')"
    table = outcome_table(rows)
    recover = any(r.recovered_outcome for r in rows)
    labels = [f"{t['model']}\n{t['group']}" for t in table]
    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(table) + 2), 4.2))
    width = 0.38 if recover else 0.7
    xs = range(len(table))
    for offset, keys, prefix in ((-width / 2 if recover else 0, OUTCOMES, ""),
                                 (width / 2, RECOVERY_OUTCOMES, "rec_")):
        if prefix and not recover:
            continue
        bottom = [0.0] * len(table)
        for o in keys:
            share = [t[prefix + o] / t["trials"] if t["trials"] else 0 for t in table]
            ax.bar([x + offset for x in xs], share, width, bottom=bottom,
                   color=_COLOURS[o], edgecolor="white",
                   label=o if prefix or o not in RECOVERY_OUTCOMES else None,
                   hatch="//" if prefix else None)
            bottom = [b + s for b, s in zip(bottom, share, strict=True)]
    if recover:
        # The recovered/unrecovered split of each group's detected faults, over its bar.
        for x, t in zip(xs, table, strict=True):
            ax.text(x + width / 2, 1.01, f"{t['rec_recovered']}/"
                    f"{t['rec_recovered'] + t['rec_unrecovered']}", ha="center",
                    va="bottom", fontsize=6)
    ax.set_xticks(list(xs), labels, fontsize=7)
    ax.set_ylabel("share of trials")
    ax.set_ylim(0, 1.08 if recover else 1)
    ax.set_title(title or ("Fault outcomes by group: left plain, right (hatched) with "
                           "recovery;\nabove: recovered / detected faults" if recover else
                           "Fault outcomes by instruction group"), fontsize=8)
    handles, names = ax.get_legend_handles_labels()
    seen = {}
    for h, n in zip(handles, names, strict=True):
        seen.setdefault(n, h)
    ax.legend(seen.values(), seen.keys(), fontsize=7, loc="upper left",
              bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    import io

    from kernelcheck.output.files import write_atomic

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=120)
    plt.close(fig)
    write_atomic(path, buffer.getvalue(), "-o")
    return f"figure written to {path}"
