"""Who produced the model outputs of an SPL build: the attribute labeler, the candidate generator and
the verdict judge, each as the identities its records name (never an invented one).

A record names its producer under ``labeler`` / ``generator`` (an object of :data:`IDENTITY_FIELDS`;
the SPL release writes them); verdict records carry the judge's model, revision and template at top
level and its engine under ``engine``. Records from elsewhere that name none are reported as
recorded with no producer.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from spl_hf.contract import IDENTITY_FIELDS, identity_key, record_identity
from spl_hf.dataset import PRODUCER_NOT_RECORDED
from spl_hf.errors import SplHfError

NOT_RECORDED = PRODUCER_NOT_RECORDED

ROLES = ("labeler", "generator", "verdict_judge")
VERDICT_MODE = "constrained"  # the verdict judge reads letter probabilities, one per verdict


_identity = record_identity  # the one validation the pair table also applies


def producer(identities: Iterable[tuple | None]) -> dict[str, Any]:
    """The distinct identities behind a set of records, with how many records each produced and the
    ``key`` the released rows name it by."""
    seen = list(identities)
    counts = Counter(i for i in seen if i is not None)
    without = sum(i is None for i in seen)
    found = [
        {**dict(zip(IDENTITY_FIELDS, ident, strict=True)), "key": identity_key(ident), "records": n}
        for ident, n in sorted(counts.items(), key=lambda kv: tuple(str(x) for x in kv[0]))
    ]
    status = "recorded" if found and not without else "partly_recorded" if found else "not_recorded"
    return {"status": status, "records": len(seen), "records_without_identity": without, "identities": found}


def record_producers(
    prompts: list[Mapping], candidates: list[Mapping], prompts_file: str, candidates_file: str
) -> dict[str, Any]:
    """The labeler (prompt and candidate records) and the generator (candidate records)."""
    labeler = [_identity(r, "labeler", prompts_file) for r in prompts]
    labeler += [_identity(r, "labeler", candidates_file) for r in candidates]
    generator = [_identity(r, "generator", candidates_file) for r in candidates]
    return {"labeler": producer(labeler), "generator": producer(generator)}


def verdict_producer(rows: list[Mapping], where: str) -> dict[str, Any]:
    """The verdict judge of the judged verdict rows: model, revision and template from the row, the
    backend and dtype from its ``engine`` object where the row has one."""
    out = []
    for row in rows:
        if row.get("status", "ok") != "ok":
            continue  # not judged: no model produced this record
        engine = row.get("engine") or {}
        if not isinstance(engine, dict):
            raise SplHfError(f"{where}:{row.get('_line', '?')}: field 'engine' must be an object or null")
        ident = {
            "model_id": row.get("model_id"),
            "model_revision": row.get("model_revision"),
            "backend": engine.get("backend"),
            "dtype": engine.get("dtype"),
            "mode": VERDICT_MODE,
            "template_hash": row.get("template_hash"),
        }
        out.append(_identity({"judge": ident, "_line": row.get("_line")}, "judge", where))
    return producer(out)
