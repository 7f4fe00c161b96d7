"""What an SPL build's card shows of its producers and label quality: rows ready to print.

One formatter for the build (which renders the card from it) and the audit (which formats the
build report's entries again and compares them with ``card.json``), so an edited card table is caught.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from spl_hf.contract import IDENTITY_FIELDS

ROLES = ("labeler", "generator", "verdict_judge")
PRODUCER_NOT_RECORDED = "recorded, producer not recorded"


def card_rows(producers: Mapping[str, Any]) -> list[dict[str, str]]:
    """One card row per (role, identity); a role with records but no identity says so."""
    names = {
        "labeler": "attribute labeler",
        "generator": "candidate generator",
        "verdict_judge": "verdict judge",
    }
    rows = []
    for role in ROLES:
        p = producers.get(role)
        if p is None:
            continue
        for ident in p["identities"]:
            cells = {f: f"`{ident[f]}`" if ident[f] else "not recorded" for f in IDENTITY_FIELDS}
            key = f"`{ident['key']}`" if ident.get("key") else "—"
            rows.append({"role": names[role], **cells, "records": str(ident["records"]), "key": key})
        if p["records_without_identity"]:
            blank = dict.fromkeys(IDENTITY_FIELDS, "—")
            rows.append(
                {
                    "role": names[role],
                    **blank,
                    "model_id": PRODUCER_NOT_RECORDED,
                    "records": str(p["records_without_identity"]),
                    "key": "null",
                }
            )
    return rows


def quantile_cells(q: Mapping) -> str:
    if q.get("q50") is None:
        return "—"
    return f"{q['q10']:.3g} / {q['q50']:.3g} / {q['q90']:.3g}"


def evidence_card(ev: Mapping[str, Any]) -> dict[str, Any]:
    """What the card's producer and quality sections show."""
    quality = ev["label_quality"]
    rows = [
        {
            "attribute": name,
            "scope": a["scope"],
            "n_items": a["items"],
            "parse_failures": a["parse_failures"],
            "not_judged": a["not_judged"],
            "not_labeled": a["not_labeled"],
            "off_label": quantile_cells(a["off_label_mass"]) if a["with_mass"] else "not recorded",
        }
        for name, a in quality["attributes"].items()
    ]
    judge = quality.get("verdict_judge")
    return {
        "producer_rows": card_rows(ev["producers"]),
        "label_quality_rows": rows,
        "released_status": quality["released_status"],
        "verdict_quality": (
            {**judge, "off_label": quantile_cells(judge["off_label_mass"])} if judge is not None else None
        ),
        "panel_markdown": ev["panel"]["markdown"] if ev.get("panel") else None,
        "panel_file": ev["panel"]["file"] if ev.get("panel") else None,
    }
