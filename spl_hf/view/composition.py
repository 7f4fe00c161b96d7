"""The composition figure of the viewer: rows per tenet (per prompt topic in an SPL release), stacked by
source, counted in Arrow (a group-by over the rows index, never row by row)."""

from __future__ import annotations

import numpy as np

from spl_hf.view.rows import RowsIndex


def composition_counts(index: RowsIndex) -> tuple[list[str], list[str], np.ndarray]:
    """(categories, sources, counts[category, source]) over every row of the release."""
    grouped = index.table.group_by(["tenet", "source"]).aggregate([([], "count_all")]).to_pydict()
    cats = sorted({c or "(none)" for c in grouped["tenet"]})
    sources = sorted(set(grouped["source"]))
    counts = np.zeros((len(cats), len(sources)), dtype=np.int64)
    for c, s, n in zip(grouped["tenet"], grouped["source"], grouped["count_all"]):
        counts[cats.index(c or "(none)"), sources.index(s)] += n
    return cats, sources, counts


def composition_figure(index: RowsIndex):
    """Stacked bars of rows per category by source: counts on an integer axis (rows are whole), the
    source legend above the bars, where it cannot cover them."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    cats, sources, counts = composition_counts(index)
    fig = Figure(figsize=(9, max(2.8, 0.28 * len(cats) + 1.8)))
    ax = fig.subplots()
    left = np.zeros(len(cats))
    for j, s in enumerate(sources):
        ax.barh(np.arange(len(cats)), counts[:, j], left=left, label=s)
        left += counts[:, j]
    ax.set_yticks(np.arange(len(cats)), cats, fontsize=8)
    ax.set_ylim(len(cats) - 0.5, -0.5)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlim(0, max(1, int(left.max())) * 1.02)
    what = "tenet" if index.kind == "tenets" else "prompt topic"
    ax.set_xlabel("rows")
    ax.set_title(f"Rows per {what}, by source ({index.total} rows)", pad=22)
    ax.legend(
        fontsize=8, frameon=False, loc="lower left", bbox_to_anchor=(0, 1.0), ncols=min(len(sources), 6)
    )
    fig.tight_layout()
    return fig
