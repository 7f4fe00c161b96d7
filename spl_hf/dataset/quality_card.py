"""What a tenet build's card shows of its judge-quality section: strings ready to print.

One function for the build (which renders the card from it) and the audit (which recomputes the
card's entry from the recomputed section), so an edited table in ``card.json`` is caught.
"""

from __future__ import annotations

from collections.abc import Mapping

QUALITY_FIGURE = "judge_quality.png"
POOL_FIGURE = "judge_vs_pool.png"  # judge score against the pool's own preference


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
        "inconsistent": _count(pos.get("inconsistent", pos["first_slot"] + pos["second_slot"]), n),
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
            "interval": "–" if a.get("low") is None else f"{_num(a['low'], 3)} – {_num(a['high'], 3)}",
            "chance": "yes" if a.get("low") is not None and a["low"] <= 0.5 <= a["high"] else "no",
            "kappa": _num(a["kappa"], 3)
            if not a.get("kappa_note")
            else f"{_num(a['kappa'], 3)} ({a['kappa_note']})",
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


def judge_quality_card(section: Mapping) -> dict:
    """What the card template shows of a ``judge_quality`` section (strings, ready to print)."""
    overall = section["overall"]
    return {
        "sentence": bias_sentence(overall),
        "rows": [_table_row(t) for t in section["tenets"]],
        "overall": _table_row(overall),
        "sources": _source_rows(overall),
        "sources_without_preference": [a["source"] for a in overall["sources"] if not a["compared"]],
        "not_judged_recorded": section["not_judged_recorded"],
        "figure": QUALITY_FIGURE,
        "pool_figure": POOL_FIGURE,
    }
