"""Classify saved responses with the model-based refusal classifier, and compare with the string matcher."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from spl_hf.backends import ResultCache
from spl_hf.errors import SplHfError
from spl_hf.evaluation.classifier import RefusalClassifier, RefusalItem
from spl_hf.refusal import agreement


def items_from_responses(rows: Sequence[dict[str, Any]], path: str = "responses") -> list[RefusalItem]:
    """One item per response row (``prompt_id`` + ``prompt_set`` name it); a row lacking a field is named."""
    items, seen = [], set()
    for i, r in enumerate(rows):
        for key in ("prompt_id", "prompt", "response"):
            if not isinstance(r.get(key), str):
                raise SplHfError(f"{path}: row {i} lacks a string {key!r}")
        item_id = f"{r.get('prompt_set') or ''}/{r['prompt_id']}"
        if item_id in seen:
            raise SplHfError(f"{path}: row {i} repeats prompt {item_id!r}")
        seen.add(item_id)
        items.append(RefusalItem(item_id, r["prompt"], r["response"]))
    if not items:
        raise SplHfError(f"{path}: no responses")
    return items


def classify_responses(
    backend: Any,
    rows: Sequence[dict[str, Any]],
    cache: ResultCache,
    progress: bool = True,
    path: str = "responses",
) -> dict[str, Any]:
    """Label every response; returns rows, counts, failures and agreement with the rows' ``refusal`` flags."""
    items = items_from_responses(rows, path)
    clf = RefusalClassifier(backend, progress=progress)
    stats = clf.run(items, cache)
    out = clf.collect(items, cache)
    for r, o in zip(rows, out, strict=True):
        o["matcher_refusal"] = r.get("refusal")
        o["matcher"] = r.get("matcher")
    summary: dict[str, Any] = {
        "rows": out,
        "classes": dict(sorted(Counter(o["label"] for o in out if o["label"]).items())),
        "computed": stats["computed"],
        "cached": stats["cached"],
        "failures": stats["failures"],
        "agreement": None,
    }
    if all(isinstance(r.get("refusal"), bool) for r in rows):
        summary["agreement"] = agreement(
            [r["refusal"] for r in rows], [o["is_refusal"] for o in out]
        ).to_dict()
    return summary
