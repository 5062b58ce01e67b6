"""The class histogram of an analysis as text: how many kernels fall in each idempotency
class, overall and for the largest kernel families.

``kernelcheck analyze`` ends a report of several kernels with it (on standard output after a
text report, on standard error after ``jsonl`` or ``sarif``), so the shape of a library is
seen without reading thousands of entries; ``--plot`` draws the same counts as a figure
(:mod:`kernelcheck.output.plots`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from kernelcheck.output.plots import CLASSES, family_counts

__all__ = ["class_table", "CLASS_LABELS"]

CLASS_LABELS = {"always": "always idempotent", "conditional": "conditionally idempotent",
                "never": "never idempotent", "not_proven": "not proven"}
#: Width of the longest bar, in characters.
BAR_WIDTH = 30


def _bar(count: int, largest: int) -> str:
    if not count or not largest:
        return ""
    return "#" * max(1, round(BAR_WIDTH * count / largest))


def class_table(records: Iterable[dict], families: int = 10) -> str:
    """The classes of ``records`` (kernel records of :mod:`kernelcheck.output.records`) as a
    text histogram, then the ``families`` largest kernel families with their counts per
    class, when some family has more than one kernel (template instances of one name). A
    record of a kernel that failed to analyse counts as not proven.

    Examples
    --------
    >>> print(class_table([{"name": "k", "class": "always"}, {"name": "k", "class": "never"},
    ...                    {"name": "j", "class": "always"}], families=0))
    classes of 3 kernels:
      always idempotent                 2   66.7%  ##############################
      conditionally idempotent          0    0.0%
      never idempotent                  1   33.3%  ###############
      not proven                        0    0.0%
    """
    records = [r for r in records if r.get("kernel") or r.get("name")]
    counts = Counter(r.get("class", "not_proven") for r in records)
    total = len(records)
    failed = sum(1 for r in records if r.get("error") or r.get("cause"))
    head = f"classes of {total:,} kernel{'s' if total != 1 else ''}"
    if failed:
        head += f" ({failed:,} that failed to analyse counted as not proven)"
    lines = [head + ":"]
    largest = max(counts.values(), default=0)
    for name in CLASSES:
        count = counts.get(name, 0)
        share = 100.0 * count / total if total else 0.0
        lines.append(f"  {CLASS_LABELS[name]:<26}{count:>9,} {share:>6.1f}%  "
                     f"{_bar(count, largest)}".rstrip())
    names = {r.get("name") or r.get("kernel") for r in records}
    if families > 0 and len(names) < total:
        rows = family_counts(records, shown=families + 1)
        width = min(48, max(len(f) for f, _ in rows))
        columns = " / ".join(c.replace("_", " ") for c in CLASSES)
        lines.append(f"largest kernel families ({columns}):")
        for family, per_class in rows:
            label = family if len(family) <= width else family[:width - 1] + "…"
            split = " / ".join(f"{per_class.get(c, 0):,}" for c in CLASSES)
            lines.append(f"  {label:<{width}} {sum(per_class.values()):>8,}  {split}")
    return "\n".join(lines)
