"""Audit of what an SPL build says about its model outputs: producers stated, and quality recounted.

``build_report.json`` and ``card.json`` must name the labeler and the generator (an identity, or
"not recorded" with the record count), and the verdict judge when the build has judge configs; the
verdict judge's model, revision and template must be exactly those in the ``judge`` column. The
released parse-status counts and the verdict judge's status and off-label mass are recomputed from
``derivations`` and ``judge_derivations`` (the same pure functions the build used) and compared.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa

from spl_hf.audit.judge_quality import _same
from spl_hf.contract import flat_figures, released_judge_quality, released_label_status
from spl_hf.derive import JUDGE_COLUMN

ROLES = ("labeler", "generator")
IDENTITY = ("model_id", "model_revision", "template_hash")


def _read(folder: Path, name: str) -> Mapping | None:
    try:
        value = json.loads((folder / name).read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    return value if isinstance(value, Mapping) else None


def _differ(where: str, what: str, stored: Any, expected: Any) -> list[str]:
    have, want = flat_figures(stored), flat_figures(expected)
    bad = [k for k in sorted(set(have) | set(want)) if not _same(have.get(k), want.get(k))]
    return [
        f"{where}: {what} {k} is {have.get(k, 'missing')!r}, recomputed {want.get(k, 'missing')!r}"
        for k in bad[:5]
    ]


def _producer_failures(where: str, producers: Any, judged: bool) -> list[str]:
    if not isinstance(producers, Mapping):
        return [f"{where}: no producers entry; an SPL build states who produced its model outputs"]
    out = []
    for role in ROLES + (("verdict_judge",) if judged else ()):
        p = producers.get(role)
        if not isinstance(p, Mapping) or not isinstance(p.get("identities"), list):
            out.append(f"{where}: producers.{role} is missing")
        elif not p["identities"] and not p.get("records_without_identity"):
            out.append(f"{where}: producers.{role} names no identity and no record without one")
    return out


def _judge_identities(table: pa.Table) -> set[tuple]:
    """(model, revision, template) of every judged side of the judge column."""
    seen = set()
    for j in table.column(JUDGE_COLUMN).to_pylist():
        for side in ("a", "b"):
            if j[f"status_{side}"] == "ok":
                seen.add(tuple(j[k] for k in IDENTITY))
    return seen


def check_spl_evidence(folder: Path, derivations: pa.Table, judged: pa.Table | None) -> list[str]:
    """Failures of the producers and labeler/judge quality the build and card state."""
    report = _read(folder, "build_report.json") or {}
    card = (_read(folder, "card.json") or {}).get("kwargs") or {}
    failures = _producer_failures("build_report.json", report.get("producers"), judged is not None)
    if card.get("producers") != report.get("producers"):
        failures.append("card.json: producers differ from build_report.json")
    status = released_label_status(derivations)
    quality = report.get("label_quality") if isinstance(report.get("label_quality"), Mapping) else {}
    failures += _differ(
        "build_report.json", "label_quality.released_status", quality.get("released_status"), status
    )
    failures += _differ("card.json", "released_status", card.get("released_status"), status)
    if judged is None:
        return failures
    judge = released_judge_quality(judged)
    failures += _differ(
        "build_report.json", "label_quality.verdict_judge", quality.get("verdict_judge"), judge
    )
    card_judge = {k: v for k, v in (card.get("verdict_quality") or {}).items() if k != "off_label"}
    failures += _differ("card.json", "verdict_quality", card_judge, judge)
    stated = (report.get("producers") or {}).get("verdict_judge") or {}
    named = {
        tuple(i.get(k) for k in IDENTITY) for i in stated.get("identities") or [] if isinstance(i, Mapping)
    }
    in_rows = _judge_identities(judged)
    if named != in_rows:
        failures.append(
            f"build_report.json: producers.verdict_judge names {sorted(named, key=str)}, the judge column "
            f"holds {sorted(in_rows, key=str)}"
        )
    return failures
