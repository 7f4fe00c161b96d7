"""How well the SPL labeler and verdict judge did, as counts the build reports and the audit recomputes.

From the records (build side, everything the labeler saw): per attribute, the items of its scope,
parse failures (``invalid_json``/``schema_error``), items not judged (``low_label_mass``: the answer
letters held too little probability), items the labeler never returned (``not_labeled``) and the
off-label mass (1 - the letters' mass) quantiles where the records store the mass.

From the released columns (both sides, what the audit can check): the parse status of every distinct
prompt and candidate in ``derivations``, and the verdict judge's status and off-label mass per
distinct judged candidate in ``judge_derivations``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from spl_hf.contract.quality import quantiles

PARSE_FAILURES = ("invalid_json", "schema_error")
NOT_JUDGED = "low_label_mass"
NOT_LABELED = "not_labeled"


def _attribute_quality(records: Sequence[Mapping], name: str) -> dict[str, Any]:
    status = Counter(str(r.get("parse_status")) for r in records)
    off = [
        1.0 - float(r["label_mass"][name])
        for r in records
        if isinstance(r.get("label_mass"), dict) and isinstance(r["label_mass"].get(name), (int, float))
    ]
    return {
        "items": len(records),
        "parsed": status.get("ok", 0),
        "parse_failures": sum(status.get(s, 0) for s in PARSE_FAILURES),
        "not_judged": status.get(NOT_JUDGED, 0),
        "not_labeled": status.get(NOT_LABELED, 0),
        "with_mass": len(off),
        "off_label_mass": quantiles(np.array(off, dtype=np.float64)),
    }


def record_label_quality(
    prompts: Sequence[Mapping],
    candidates: Sequence[Mapping],
    prompt_attrs: Sequence[str],
    response_attrs: Sequence[str],
) -> dict[str, Any]:
    """Per attribute (schema order) the labeler's outcome over every prompt or candidate record."""
    out = {}
    for scope, records, names in (
        ("prompt", prompts, prompt_attrs),
        ("response", candidates, response_attrs),
    ):
        for name in names:
            out[name] = {"scope": scope, **_attribute_quality(records, name)}
    return out


def _side_keys(derived: pa.Table) -> tuple[dict, set]:
    """Status of each distinct prompt, and the distinct candidates of a pair table.

    Rows carry no candidate id, so a candidate is its (prompt_id, instruction, response, status):
    two candidates of one prompt with the same instruction, text and status count once."""
    rows = derived.select(
        ["prompt_id", "instruction_a", "instruction_b", "response_a", "response_b", "attribute_status"]
    ).to_pylist()
    prompts: dict[str, str | None] = {}
    cands: set[tuple] = set()
    for r in rows:
        st = r["attribute_status"] or {}
        prompts.setdefault(r["prompt_id"], st.get("prompt"))
        for side in ("a", "b"):
            cands.add(
                (r["prompt_id"], r[f"instruction_{side}"], r[f"response_{side}"], st.get(f"response_{side}"))
            )
    return prompts, cands


def released_label_status(derived: pa.Table) -> dict[str, dict[str, int]]:
    """Parse status counts of the distinct prompts and candidates that appear in a pair table."""
    prompts, cands = _side_keys(derived)
    return {
        "prompt": dict(sorted(Counter(str(s) for s in prompts.values()).items())),
        "response": dict(sorted(Counter(str(c[-1]) for c in cands).items())),
    }


def released_judge_quality(judged: pa.Table, column: str = "judge") -> dict[str, Any]:
    """Verdict judge per distinct candidate of ``judge_derivations``: status counts and off-label mass."""
    per: dict[str, tuple[str | None, float | None]] = {}
    for j in judged.column(column).to_pylist():
        for side in ("a", "b"):
            per.setdefault(j[f"candidate_{side}"], (j[f"status_{side}"], j[f"mass_{side}"]))
    off = [1.0 - m for s, m in per.values() if s == "ok" and m is not None]
    return {
        "candidates": len(per),
        "status": dict(sorted(Counter(str(s) for s, _ in per.values()).items())),
        "off_label_mass": quantiles(np.array(off, dtype=np.float64)),
    }
