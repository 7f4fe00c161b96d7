"""Why a tenet row says what it says: the judge's two orderings, the score they give, the threshold,
the row's scores on the other tenets and the assignment certificate's prices for its prompt."""

from __future__ import annotations

import math

import pyarrow.compute as pc

from spl_hf.contract import name_orderings
from spl_hf.explain.locate import RowRef
from spl_hf.explain.release import Release
from spl_hf.explain.text import clipped, last_content, messages_text


def explain_tenet(release: Release, ref: RowRef, clip: int) -> dict:
    """The derivation of one row of a tenet release, as JSON-ready values."""
    row = ref.row
    der = row["derivation"]
    judge = der["judge"]
    side = der["chosen_side"]
    chosen, rejected = last_content(row["chosen"]), last_content(row["rejected"])
    response_a, response_b = (chosen, rejected) if side == "a" else (rejected, chosen)
    return {
        "kind": "tenets",
        "release": release.describe(),
        "config": ref.config,
        "split": ref.split,
        "index": ref.index,
        "scenario_id": row["scenario_id"],
        "pair_id": der["pair_id"],
        "prompt_id": der["prompt_id"],
        "source": row["source"],
        "tenet": row["tenet"],
        "statement": _statements(release).get(row["tenet"]),
        "prompt": messages_text(row["prompt"], clip),
        "response_a": clipped(response_a, clip),
        "response_b": clipped(response_b, clip),
        "chosen_side": side,
        "judge": {k: judge[k] for k in ("model_id", "model_revision", "template_hash")},
        "score": _score(row, judge, der),
        "other_tenets": _other_tenets(release, der["pair_id"], row["tenet"], der["threshold"]),
        "assignment": _assignment(release, row, der),
    }


def _statements(release: Release) -> dict[str, str]:
    kw = release.card_kwargs
    return {
        name: text for name, text in [*kw.get("kept", []), *kw.get("dropped", [])] if isinstance(name, str)
    }


def _score(row: dict, judge: dict, der: dict) -> dict:
    from spl_hf.contract import score_from_probs

    p1, p2 = judge["p_a_first"], judge["p_a_second"]
    recomputed = score_from_probs(p1, p2)
    threshold = der["threshold"]
    return {
        "p_a_first": p1,
        "p_a_second": p2,
        # What the two stored P(first shown better) mean: P(A better | A first), P(A better | B first).
        **name_orderings(p1, p2).to_dict(),
        "mass_first": judge["mass_first"],
        "mass_second": judge["mass_second"],
        "formula": f"score = p_a_first − p_a_second = {p1:.6f} − {p2:.6f} = {recomputed:.6f}",
        "recomputed": recomputed,
        # The row stores |score|: the margin of the chosen response over the rejected one.
        "stored": row["score"],
        "matches": math.isclose(abs(recomputed), row["score"], rel_tol=0, abs_tol=1e-12),
        "threshold": threshold,
        "eligible": abs(recomputed) >= threshold,
        "side_from_sign": "a" if recomputed > 0 else "b",
        "capacity": der["capacity"],
        "seed": der["seed"],
    }


def _judge_scores(release: Release, column: str, value: str):
    if "judge_scores" not in release.splits:
        return None
    data = release.dataset("judge_scores", next(iter(release.splits["judge_scores"])))
    return data.to_table(filter=pc.field(column) == value)


def _other_tenets(release: Release, pair_id: str, tenet: str, threshold: float) -> list[dict]:
    """This pair's score on every tenet it was judged on, with its eligibility and the tenet's fate."""
    table = _judge_scores(release, "pair_id", pair_id)
    if table is None:
        return []
    cert = release.certificate or {}
    kept = set(cert.get("kept_tenets", []))
    dropped = {d["tenet"]: d["reason"] for d in cert.get("dropped_tenets", [])}
    out = []
    for r in table.select(["tenet", "score", "p_a_first", "p_a_second"]).to_pylist():
        out.append(
            {
                **r,
                "position": name_orderings(r["p_a_first"], r["p_a_second"]).position,
                "eligible": abs(r["score"]) >= threshold,
                "this_row": r["tenet"] == tenet,
                "tenet_status": "kept"
                if r["tenet"] in kept
                else f"dropped ({dropped.get(r['tenet'], 'not kept')})",
            }
        )
    return sorted(out, key=lambda r: -abs(r["score"]))


def _assignment(release: Release, row: dict, der: dict) -> dict | None:
    """The prompt's arcs in the final network with their reduced costs (None without a certificate)."""
    from spl_hf.assign import mark_assigned, prompt_arcs

    cert = release.certificate
    scores = _judge_scores(release, "prompt_id", der["prompt_id"])
    if cert is None or scores is None:
        return None
    pi_p, arcs = prompt_arcs(cert, scores, der["prompt_id"])
    arcs = mark_assigned(arcs, row["tenet"], pi_p)
    unit = int(cert["scale"]) * int(cert["big_m"])  # gain units per unit of |score|
    here = next((a for a in arcs if a.assigned), None)
    alternatives = []
    for a in arcs:
        if a.assigned or here is None:
            continue
        alternatives.append(
            {
                **a.to_dict(),
                "gain_change": (a.gain - here.gain) / unit,
                "price_difference": (a.tenet_potential - here.tenet_potential) / unit,
                # gain change − price difference = −(both reduced costs): never positive when certified
                "net_change": -(a.reduced_cost + here.reduced_cost) / unit
                if a.reduced_cost is not None and here.reduced_cost is not None
                else None,
            }
        )
    return {
        "prompt_potential": pi_p,
        "source_potential": cert["potential_source"],
        "sink_potential": cert["potential_sink"],
        "scale": cert["scale"],
        "big_m": cert["big_m"],
        "tie_range": cert["tie_range"],
        "gain_unit": unit,
        "assigned_arc": here.to_dict() if here else None,
        "alternatives": alternatives,
        "all_reduced_costs_nonnegative": all(
            a.reduced_cost is not None and a.reduced_cost >= 0 for a in arcs
        ),
        "objective": cert["objective"],
        "strategy": cert["strategy"],
        "kept_tenets": len(cert["kept_tenets"]),
        "dropped_tenets": cert["dropped_tenets"],
    }
