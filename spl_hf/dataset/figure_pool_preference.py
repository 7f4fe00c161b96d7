"""Judge score against the pool's own preference: does the judge side with the pool's label?

One row per (source pool, stated preference): every judged score of pairs whose pool prefers A, and of
those whose pool prefers B, as points along the score axis. A judge that agrees with the pool puts the
"prefers A" points right of 0 and the "prefers B" points left of it. Pairs whose pool states no
preference (or a tie) are counted in the data but not drawn. Drawn without pyplot; the PNG depends on
the data only.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa

from spl_hf.dataset.figure_judge_quality import score_reach
from spl_hf.dataset.png import save_png
from spl_hf.held import first_seen_codes

FIGURE_FILE = "judge_vs_pool.png"
COLORS = {"a": "#2b8a3e", "b": "#c92a2a"}


def pool_preference_data(scores: pa.Table, threshold: float) -> list[dict]:
    """Per source and stated preference ("a"/"b"): the judged scores (an array), their mean, and how
    many eligible judgements (|score| ≥ threshold) side with the pool (the score's sign is the judge's side)."""
    import pyarrow.compute as pc

    # Integer codes and boolean masks: a build's judge_scores holds millions of rows.
    values, indices = first_seen_codes(scores.column("source"))
    names = values.to_pylist()
    codes = indices.fill_null(-1).to_numpy(zero_copy_only=False)
    pref = scores.column("source_preference")
    is_side = {side: np.asarray(pc.equal(pref, side).fill_null(False)) for side in ("a", "b")}
    score = np.asarray(scores.column("score").to_numpy(zero_copy_only=False), dtype=float)
    out = []
    for s in sorted(names):
        of_source = codes == names.index(s)
        for side in ("a", "b"):
            values = score[of_source & is_side[side]]
            eligible = values[np.abs(values) >= threshold]
            agree = int(np.sum(eligible > 0)) if side == "a" else int(np.sum(eligible < 0))
            out.append(
                {
                    "source": s,
                    "preference": side,
                    "scores": values,
                    "n": int(values.size),
                    "mean": float(values.mean()) if values.size else None,
                    "eligible": int(eligible.size),
                    "agree": agree,
                }
            )
        out[-1]["unstated"] = int(np.sum(of_source & ~is_side["a"] & ~is_side["b"]))
    return out


def pool_preference_figure(data: list[dict], threshold: float):
    """A ``matplotlib.figure.Figure``: one row per (source, stated preference), scores as points."""
    from matplotlib.figure import Figure

    rows = [d for d in data if d["n"]]
    fig = Figure(figsize=(8, max(2.6, 0.42 * len(rows) + 1.6)))
    ax = fig.subplots()
    reach = score_reach(
        np.concatenate([np.asarray(d["scores"]) for d in rows]) if rows else np.zeros(0), threshold
    )
    for y, d in enumerate(rows):
        values = np.asarray(d["scores"])
        spread = (np.arange(values.size) % 5 - 2) * 0.06  # fixed offsets, no random jitter
        ax.scatter(values, y + spread, s=14, color=COLORS[d["preference"]], edgecolor="black", linewidth=0.3)
        ax.annotate(
            f"n={d['n']}, agree {d['agree']}/{d['eligible']} eligible",
            (1, y),
            xycoords=("axes fraction", "data"),
            xytext=(4, 0),
            textcoords="offset points",
            va="center",
            fontsize=7,
        )
    ax.axvline(0, color="black", linewidth=0.8)
    for x in (-threshold, threshold):
        ax.axvline(
            x,
            color="gray",
            linestyle="--",
            linewidth=0.8,
            label=f"threshold ±{threshold:g}" if x > 0 else None,
        )
    ax.set_yticks(
        range(len(rows)), [f"{d['source']}: pool prefers {d['preference'].upper()}" for d in rows], fontsize=7
    )
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xlim(-reach, reach)
    ax.set_xlabel("judge score = P(A better) − P(B better)")
    ax.set_title(
        "Judge score against the pool's own preference\n(agreeing: 'prefers A' right of 0, 'prefers B' left)",
        fontsize=9,
    )
    if rows:
        ax.legend(loc="lower left", fontsize=7, frameon=False)
    fig.tight_layout()
    return fig


def save_pool_preference_figure(path: str | Path, scores: pa.Table, threshold: float) -> Path:
    return save_png(pool_preference_figure(pool_preference_data(scores, threshold), threshold), path)


def pool_preference_png(scores, threshold: float) -> bytes:
    """The PNG bytes of a tenet build's judge-vs-pool figure over its ``judge_scores`` rows, as the build
    draws it and the audit redraws it."""
    from spl_hf.dataset.png import drawn_png

    data = pool_preference_data(scores, threshold)
    return drawn_png(
        "pool_preference", (data, float(threshold)), lambda: pool_preference_figure(data, threshold)
    )
