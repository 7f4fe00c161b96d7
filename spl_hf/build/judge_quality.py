"""The judge-quality part of a tenet build: the report entry, the card's table and sentence, the PNG.

The figures themselves are :func:`spl_hf.contract.quality.judge_quality_section`, a pure
function of the released ``judge_scores`` rows and the released rows' scores, which the audit
recomputes; this module only gathers its inputs from the build and formats its output.
"""

from __future__ import annotations

import io
from collections.abc import Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from spl_hf.contract import TenetQuality, judge_quality, section_of
from spl_hf.errors import SplHfError

FIGURE_FILE = "judge_quality.png"


def released_scores(rows: pa.Table, kept: list[str]) -> dict[str, np.ndarray]:
    """The |score| of each released row, per kept tenet."""
    tenet = rows.column("tenet")
    return {t: rows.filter(pc.equal(tenet, t)).column("score").to_numpy() for t in kept}


def build_quality(
    scores: pa.Table,
    rows: pa.Table,
    kept: list[str],
    threshold: float,
    capacity: int,
    not_judged: Mapping[str, int] | None = None,
) -> tuple[list[TenetQuality], dict]:
    """The per-tenet figures and the ``judge_quality`` entry of the build report and card inputs.

    ``not_judged`` is the judge stage's count per tenet of judgements below its label-mass floor;
    without it (a build from bare score files) the count is 0 and ``not_judged_recorded`` false, and
    the card says so.
    """
    quality = judge_quality(
        scores, released_scores(rows, kept), threshold=threshold, capacity=capacity, not_judged=not_judged
    )
    section = section_of(
        quality, threshold=threshold, capacity=capacity, not_judged_recorded=not_judged is not None
    )
    return quality, section


def read_not_judged(path: str | None) -> dict[str, int] | None:
    """The judge stage's ``not_judged.json`` (tenet -> count), checked; None without a file."""
    import json
    from pathlib import Path

    if path is None:
        return None
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SplHfError(f"{path}: not a JSON object of not-judged counts ({exc})") from None
    if not isinstance(data, dict) or not all(
        isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and v >= 0
        for k, v in data.items()
    ):
        raise SplHfError(f"{path}: expected a JSON object of tenet -> count (whole numbers >= 0)")
    return data


def _count(n: int, of: int) -> str:
    return f"{n} ({100 * n / of:.0f}%)" if of else "0"


def _num(x: float | None, digits: int = 2) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def _dist(q: Mapping) -> str:
    """``mean (q10 / q50 / q90)`` of a quantiles entry."""
    if q.get("mean") is None:
        return "–"
    return f"{_num(q['mean'])} ({_num(q['q10'])} / {_num(q['q50'])} / {_num(q['q90'])})"


def _table_row(t: Mapping) -> dict[str, str]:
    pos, n = t["position"], t["position"]["judged"]
    return {
        "tenet": t["tenet"],
        "judged": str(n),
        "consistent": _count(pos["consistent"], n),
        "first_slot": _count(pos["first_slot"], n),
        "second_slot": _count(pos["second_slot"], n),
        "abs_judged": _dist(t["abs_score_judged"]),
        "abs_released": _dist(t["abs_score_released"]),
        "eligible": f"{t['eligible']} / {t['capacity']}",
        "off_label": f"{_num(t['off_label_mass']['q50'], 3)} / {_num(t['off_label_mass']['q90'], 3)}",
        "not_judged": str(t["not_judged"]),
    }


def _source_rows(overall: Mapping) -> list[dict[str, str]]:
    return [
        {
            "source": a["source"],
            "compared": str(a["compared"]),
            "agree": str(a["agree"]),
            "share": _num(a["share"], 3),
            "kappa": _num(a["kappa"], 3),
        }
        for a in overall["sources"]
        if a["compared"]
    ]


def bias_sentence(overall: Mapping) -> str:
    """One sentence on the judge's position consistency over all judgements; says when it is biased."""
    pos = overall["position"]
    n, c, first, second = pos["judged"], pos["consistent"], pos["first_slot"], pos["second_slot"]
    if not n:
        return "No judgement was made, so the judge's position consistency is unknown."
    slot, k = ("first", first) if first >= second else ("second", second)
    if k > c:
        return (
            f"**The judge is position-biased**: the {slot}-shown response was preferred in both orderings "
            f"in {k} of {n} judgements, and {c} of {n} prefer the same response in both orderings."
        )
    return (
        f"The judge prefers the same response in both orderings in {c} of {n} judgements; the "
        f"first-shown response wins both in {first}, the second-shown in {second}."
    )


def card_context(section: Mapping) -> dict:
    """What the card template shows of a ``judge_quality`` section (strings, ready to print)."""
    overall = section["overall"]
    return {
        "sentence": bias_sentence(overall),
        "rows": [_table_row(t) for t in section["tenets"]],
        "overall": _table_row(overall),
        "sources": _source_rows(overall),
        "sources_without_preference": [a["source"] for a in overall["sources"] if not a["compared"]],
        "not_judged_recorded": section["not_judged_recorded"],
        "figure": FIGURE_FILE,
    }


def figure_png(scores: pa.Table, rows: pa.Table, quality: list[TenetQuality], threshold: float) -> bytes:
    """The PNG of :mod:`spl_hf.report._judge_quality_figure` as bytes (signed scores, judged and released)."""
    from spl_hf.report import PNG_METADATA, judge_quality_figure

    judged = scores.column("p_a_first").to_numpy() - scores.column("p_a_second").to_numpy()
    judge = pc.struct_field(rows.column("derivation").combine_chunks(), "judge")
    released = (
        pc.struct_field(judge, "p_a_first").to_numpy(zero_copy_only=False)
        - pc.struct_field(judge, "p_a_second").to_numpy(zero_copy_only=False)
        if rows.num_rows
        else np.array([])
    )
    fig = judge_quality_figure(quality, judged, released, threshold)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120, metadata=PNG_METADATA)
    return buf.getvalue()
