"""The evidence an SPL build carries about its model outputs: who produced them (labeler, generator,
verdict judge) and how well (parse failures, not-judged items, off-label mass, panel agreement)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from spl_hf.build.producers import record_producers, verdict_producer
from spl_hf.contract import (
    record_label_quality,
    released_judge_quality,
    released_label_status,
)
from spl_hf.schema import AttributeSchema


def evidence(
    prompts: list[Mapping],
    candidates: list[Mapping],
    files: tuple[str, str],
    schema: AttributeSchema,
    derived: pa.Table,
    verdict_rows: list[Mapping] | None,
    cfg: Any,  # SPLBuildConfig: its verdicts and panel files
    judged: pa.Table | None = None,
) -> dict[str, Any]:
    """``producers`` and ``label_quality`` for the build report and the card (``panel`` when given)."""
    producers = record_producers(prompts, candidates, *files)
    if verdict_rows is not None:
        producers["verdict_judge"] = verdict_producer(verdict_rows, Path(cfg.verdicts).name)
    quality: dict[str, Any] = {
        "attributes": record_label_quality(
            prompts, candidates, schema.names("prompt"), schema.names("response")
        ),
        "released_status": released_label_status(derived),
    }
    if judged is not None:
        quality["verdict_judge"] = released_judge_quality(judged)
    out: dict[str, Any] = {"producers": producers, "label_quality": quality}
    if cfg.panel:
        out["panel"] = panel_report(cfg.panel, prompts, candidates, schema)
    return out


def evidence_report(ev: Mapping[str, Any]) -> dict[str, Any]:
    """The build report's entries (the panel without its card markdown)."""
    out = {"producers": ev["producers"], "label_quality": ev["label_quality"]}
    if "panel" in ev:
        out["panel"] = {k: v for k, v in ev["panel"].items() if k != "markdown"}
    return out


def panel_report(
    path: str, prompts: Sequence[Mapping], candidates: Sequence[Mapping], schema: AttributeSchema
) -> dict[str, Any]:
    """Tables V and XI of the labeler against a rater panel whose items are ids of these records."""
    from spl_hf.agreement import ModelLabel, normalise_label, panel_agreement, read_panel

    ratings = read_panel(path, schema)
    rated = {(r.item_id, r.attribute) for r in ratings}
    labels = []
    for records, key in ((prompts, "prompt_id"), (candidates, "candidate_id")):
        for rec in records:
            attrs = rec.get("attributes") or {}
            for name in schema.names("prompt") if key == "prompt_id" else schema.names("response"):
                if (rec[key], name) in rated:  # None: unparsed, a parse failure of the panel item
                    value = attrs.get(name)
                    where = f"record {rec[key]}"
                    label = None if value is None else normalise_label(value, name, schema, where)
                    labels.append(ModelLabel(rec[key], name, label))
    report = panel_agreement(ratings, labels, schema, Path(path).name, "the build's records")
    markdown = report.to_markdown().replace("\n## ", "\n#### ").replace("## ", "#### ", 1)
    return {"file": Path(path).name, "agreement": report.to_dict(), "markdown": markdown}
