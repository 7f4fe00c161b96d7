"""The judge-quality figure of a tenet release: score distribution and position consistency per tenet.

Left panel: histogram of every judged score and of the released ones, with the eligibility threshold
marked. Right panel: per tenet, the share of judgements that are position-consistent, first-slot,
second-slot or undecided (see :mod:`spl_hf.contract.quality`). Drawn without pyplot and saved
without the matplotlib version, so the PNG depends on the data only.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from spl_hf.contract import TenetQuality
from spl_hf.dataset.png import drawn_png, save_png

SHARES = (
    ("consistent", "position-consistent", "#2b8a3e"),
    ("first_slot", "first shown wins twice", "#e8590c"),
    ("second_slot", "second shown wins twice", "#1971c2"),
    ("undecided", "undecided (P = 0.5)", "#adb5bd"),
)


def _shares(q: TenetQuality) -> dict[str, float]:
    p = q.position
    n = p.judged or 1
    done = p.consistent + p.first_slot + p.second_slot
    return {
        "consistent": p.consistent / n,
        "first_slot": p.first_slot / n,
        "second_slot": p.second_slot / n,
        "undecided": (p.judged - done) / n,
    }


def score_reach(scores: np.ndarray, threshold: float) -> float:
    """Half-width of the score axis: the largest |score| or the threshold, with a 10% margin, at most 1
    (a judge whose scores are all near 0 gets an axis that shows them, not a bar squeezed at 0)."""
    values = np.abs(np.asarray(scores, dtype=float))
    top = max(float(values.max()) if values.size else 0.0, float(threshold), 1e-3)
    return min(1.0, top * 1.1)


def judge_quality_figure(
    quality: Sequence[TenetQuality], scores: np.ndarray, released: np.ndarray, threshold: float
):
    """A two-panel ``matplotlib.figure.Figure`` (the per-tenet rows of ``quality``, not ``"all"``)."""
    from matplotlib.figure import Figure

    tenets = [q for q in quality if q.tenet != "all"]
    fig = Figure(figsize=(11, max(3.0, 0.28 * len(tenets) + 2.2)))
    left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1.3]})
    reach = score_reach(scores, threshold)
    bins = np.linspace(-reach, reach, 41)
    left.hist(np.asarray(scores, dtype=float), bins=bins, color="#868e96", label="judged")
    left.hist(np.asarray(released, dtype=float), bins=bins, color="#5f3dc4", label="released")
    for x in (-threshold, threshold):
        left.axvline(
            x,
            color="black",
            linestyle="--",
            linewidth=0.8,
            label=f"threshold ±{threshold:g}" if x > 0 else None,
        )
        left.annotate(
            f"{x:+g}",
            (x, 1),
            xycoords=("data", "axes fraction"),
            xytext=(0, 2),
            textcoords="offset points",
            ha="center",
            va="bottom",
            fontsize=7,
        )
    left.set_xlim(-reach, reach)
    left.set(xlabel="score = P(A better) − P(B better)", ylabel="judgements")
    left.set_title("Scores (|score| ≥ threshold is eligible)", pad=14)
    left.legend(loc="upper left", frameon=False, fontsize=7)
    y = np.arange(len(tenets))
    start = np.zeros(len(tenets))
    for key, label, color in SHARES:
        width = np.array([_shares(q)[key] for q in tenets])
        right.barh(y, width, left=start, color=color, label=label)
        start += width
    right.set_yticks(y, [q.tenet for q in tenets], fontsize=7)
    right.set_ylim(len(tenets) - 0.5, -0.5)  # first tenet on top, no empty band above or below
    right.set(xlim=(0, 1), xlabel="share of judgements")
    # Legend above the bars and the title above it, at offsets in points: clear of the axis label
    # whatever the figure's height (which grows with the number of tenets).
    right.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, fontsize=7, frameon=False)
    right.set_title("Position consistency per tenet", pad=30)
    fig.tight_layout()
    return fig


def save_judge_quality_figure(
    path: str | Path,
    quality: Sequence[TenetQuality],
    scores: np.ndarray,
    released: np.ndarray,
    threshold: float,
) -> Path:
    """Draw and save the figure as PNG (deterministic bytes for the same data)."""
    return save_png(judge_quality_figure(quality, scores, released, threshold), path)


def judge_quality_png(scores, rows, quality: Sequence[TenetQuality], threshold: float) -> bytes:
    """The PNG bytes of a tenet build's figure: every judged (signed) score of the ``judge_scores`` table
    ``scores`` and those of the released ``rows``, as the build draws it and the audit redraws it."""
    import pyarrow.compute as pc

    judged = scores.column("p_a_first").to_numpy() - scores.column("p_a_second").to_numpy()
    judge = pc.struct_field(rows.column("derivation").combine_chunks(), "judge")
    released = (
        pc.struct_field(judge, "p_a_first").to_numpy(zero_copy_only=False)
        - pc.struct_field(judge, "p_a_second").to_numpy(zero_copy_only=False)
        if rows.num_rows
        else np.array([])
    )
    inputs = (judged, released, tuple(quality), float(threshold))
    return drawn_png(
        "judge_quality", inputs, lambda: judge_quality_figure(quality, judged, released, threshold)
    )
