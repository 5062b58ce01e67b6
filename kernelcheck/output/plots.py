"""Figures of a library's analysis: the class histogram by kernel family (``--plot``).

A library holds thousands of kernels, most of them template instances of a few dozen
families (``vectorized_elementwise_kernel``, ``reduce_kernel``, ``gemm...``). The histogram
stacks the four classes per family (the kernel's short name, :func:`kernelcheck.names.
short_name`), the largest families first, the rest summed in one bar, so what a library's
kernels are made of is seen at a glance. Needs matplotlib (the ``plot`` extra).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from kernelcheck.errors import KernelcheckError

__all__ = ["require_matplotlib", "class_histogram", "family_counts"]

CLASSES = ("always", "conditional", "never", "not_proven")
_COLOURS = {"always": "#31a354", "conditional": "#fdae6b", "never": "#de2d26",
            "not_proven": "#9e9ac8"}
#: Families drawn one by one; the others share the last bar.
FAMILIES_SHOWN = 24


def require_matplotlib(option: str) -> None:
    """Raise a one-line error when matplotlib cannot be imported."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise KernelcheckError(f"{option} needs matplotlib: pip install "
                               f"'kernelcheck[plot]'") from None


def family_counts(records: Iterable[dict], shown: int = FAMILIES_SHOWN
                  ) -> list[tuple[str, Counter]]:
    """``[(family, Counter of classes)]``, largest families first, the rest in ``(other)``.

    Examples
    --------
    >>> rows = family_counts([{"name": "k", "class": "always"}, {"name": "k", "class": "never"},
    ...                       {"name": "j", "class": "always"}])
    >>> [(f, dict(c)) for f, c in rows]
    [('k', {'always': 1, 'never': 1}), ('j', {'always': 1})]
    """
    families: dict[str, Counter] = {}
    for record in records:
        name = record.get("name") or record.get("kernel") or "(image)"
        families.setdefault(name, Counter())[record.get("class", "not_proven")] += 1
    ordered = sorted(families.items(), key=lambda kv: (-sum(kv[1].values()), kv[0]))
    if len(ordered) <= shown:
        return ordered
    rest: Counter = Counter()
    for _, counts in ordered[shown - 1:]:
        rest.update(counts)
    return ordered[:shown - 1] + [(f"({len(ordered) - shown + 1} other families)", rest)]


def class_histogram(records: list[dict], path: str, title: str = "") -> str:
    """Draw the class histogram by family to ``path`` (written whole or not at all);
    returns the line to print."""
    require_matplotlib("--plot")
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from kernelcheck.output.files import write_atomic

    rows = family_counts(records)
    height = max(3.0, 0.28 * len(rows) + 1.6)
    fig, ax = plt.subplots(figsize=(8.0, height))
    labels = [family if len(family) <= 48 else family[:47] + "…" for family, _ in rows]
    left = [0] * len(rows)
    ys = list(range(len(rows)))[::-1]
    for kind in CLASSES:
        widths = [counts.get(kind, 0) for _, counts in rows]
        ax.barh(ys, widths, left=left, color=_COLOURS[kind], label=kind.replace("_", " "),
                edgecolor="white")
        left = [a + b for a, b in zip(left, widths, strict=True)]
    ax.set_yticks(ys, labels, fontsize=7)
    ax.set_xlabel("kernels")
    total = sum(sum(c.values()) for _, c in rows)
    ax.set_title(title or f"Idempotency class by kernel family ({total} kernels)", fontsize=9)
    ax.legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110)
    plt.close(fig)
    write_atomic(path, buffer.getvalue(), "--plot")
    return f"kernelcheck: class histogram of {total} kernels written to {path}"
