"""The ``settings`` a tenet build states in build_report.json, and what the audit expects of them.

A release is trusted because it says what produced it. The build states what it was asked to make
(the assignment settings, the tenets it judged, the judge's identity); the audit recomputes the same
block from the certificate and the released judge scores (:func:`expected_settings`), so a stated
threshold, seed, capacity, tenet list or judge that the rows were not made under is named, never
passed over. Both sides call these functions, so the two cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

ASSIGN_SETTINGS = ("capacity", "threshold", "solver", "seed", "scale", "strategy", "tie_range")


def judge_identities(scores: pa.Table) -> list[dict[str, Any]]:
    """Each distinct (model_id, model_revision) of a score table, sorted."""
    keys = [k for k in ("model_id", "model_revision") if k in scores.column_names]
    if len(keys) < 2:
        return []
    judges = scores.select(keys).group_by(keys).aggregate([]).to_pylist()
    return sorted(judges, key=lambda j: (str(j["model_id"]), str(j["model_revision"])))


def score_tenets(scores: pa.Table) -> list[str]:
    return (
        sorted({str(t) for t in pc.unique(scores.column("tenet")).to_pylist()})
        if "tenet" in scores.column_names
        else []
    )


def stated_settings(assign: Mapping[str, Any], scores: pa.Table, tenets: list[str] | None) -> dict[str, Any]:
    """The block a build writes: ``assign`` (an AssignConfig's values), the tenets it was asked to judge
    (default: those of the scores) and the judge identities of the scores."""
    return {
        **{k: assign[k] for k in ASSIGN_SETTINGS},
        "tenets": sorted(tenets) if tenets is not None else score_tenets(scores),
        "judge": judge_identities(scores),
    }


def expected_settings(stated: object, cert: Any, scores: pa.Table) -> dict[str, Any]:
    """The settings block recomputed: the certificate's assignment settings (a stated ``tie_range`` of None
    means "chosen by the solver", so the certificate's is not compared), the stated tenets when they cover
    every tenet the certificate and the scores hold (else those tenets, so the difference is named), and
    the scores' judge identities."""
    stated = stated if isinstance(stated, Mapping) else {}
    out: dict[str, Any] = {k: getattr(cert, k) for k in ASSIGN_SETTINGS}
    if stated.get("tie_range", "missing") is None:
        out["tie_range"] = None
    made = set(score_tenets(scores)) | set(cert.kept_tenets) | {d.tenet for d in cert.dropped_tenets}
    listed = stated.get("tenets")
    names = {str(t) for t in listed} if isinstance(listed, list) else set()
    out["tenets"] = sorted(names) if isinstance(listed, list) and made <= names else sorted(made | names)
    out["judge"] = judge_identities(scores)
    return out
