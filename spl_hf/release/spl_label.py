"""The SPL release's model stages after generation: attribute labels, and the verdict judge.

``label`` labels prompt attributes once per prompt and response attributes per candidate, and writes
the prompt and candidate records the SPL build reads; ``verdict`` judges every candidate with one
rule-base verdict. Both run their worker through the runner (:func:`spl_hf.backends.run_stage`) on
the release's executor and results folder, so killed work resumes shard by shard.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from spl_hf.files import jsonl_line, text_writer, write_parquet
from spl_hf.release.reads import with_changes

VERDICTS_FILE = "verdicts.jsonl"


def label_stage(rel: Any, clean_dir: Path, gen_dir: Path, out: Path) -> dict[str, Any]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from spl_hf.backends import LabelerConfig, items_from_rows, run_stage
    from spl_hf.backends import label_stage as labeling

    cands = pq.read_table(gen_dir / "candidates.parquet").to_pylist()
    prompts, _ = rel._with_candidates(pq.read_table(clean_dir / "prompts.parquet").to_pylist())
    rows = [
        {"prompt_id": r["prompt_id"], "prompt": [{"role": "user", "content": r["prompt"]}]} for r in prompts
    ]
    rows += [
        {
            "prompt_id": r["prompt_id"],
            "prompt": r["prompt"],
            "response": r["response"],
            "response_id": r["response_id"],
        }
        for r in cands
    ]
    items, failures = items_from_rows(rows)
    config = LabelerConfig(mode=rel.cfg.labeler_mode, progress=rel.generation.progress)
    result = run_stage(labeling(rel.cfg, rel.rulebase.schema, config), items, rel.store, rel.executor)
    labels = result.rows
    write_parquet(out / "labels.parquet", pa.Table.from_pylist(labels))
    # The records the SPL build reads: prompt attributes once per prompt, response attributes per candidate.
    by_id = {(r["scope"], r["prompt_id"] if r["scope"] == "prompt" else r["response_id"]): r for r in labels}
    engine = result.stats["engine"]  # backend and resolved dtype, as the shards record them
    labeler_id = {**engine, "mode": config.mode, **_model_identity(labels)}
    with text_writer(out / "prompts.jsonl") as fh:
        for p in prompts:
            rec = {**_record(p, by_id.get(("prompt", p["prompt_id"]))), "labeler": labeler_id}
            fh.write(jsonl_line(rec))
    with text_writer(out / "candidates.jsonl") as fh:
        for r in cands:
            lab = by_id.get(("response", r["response_id"]))
            rec = {
                "prompt_id": r["prompt_id"],
                "candidate_id": r["response_id"].replace("/", "_"),
                "instruction": r["instruction"],
                "response": r["response"],
                **_attrs(lab),
                "labeler": labeler_id,
                # The generate stage runs the same model settings; its rows carry the weights' identity.
                "generator": {
                    **engine,
                    "mode": "generate",
                    "model_id": r["model_id"],
                    "model_revision": r["model_revision"],
                    "template_hash": r["template_hash"],
                },
            }
            fh.write(jsonl_line(rec))
    statuses: dict[str, int] = {}
    for r in labels:
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    return {
        "items": len(items),
        "labels": len(labels),
        "malformed": len(failures),
        "status": statuses,
        "computed": result.computed,
        "cached": result.cached,
    }


def verdict_stage(rel: Any, label_dir: Path, out: Path) -> dict[str, Any]:
    from spl_hf.backends import items_from_rows, run_stage
    from spl_hf.backends import verdict_stage as judging
    from spl_hf.derive import VerdictRecord, read_jsonl, verdict_options, verdict_record_json

    text = {p["prompt_id"]: p["prompt"] for p in read_jsonl(label_dir / "prompts.jsonl")}
    cands = read_jsonl(label_dir / "candidates.jsonl")
    items, failures = items_from_rows(
        {
            "prompt_id": r["prompt_id"],
            "prompt": [{"role": "user", "content": text[r["prompt_id"]]}],
            "response": r["response"],
            "response_id": r["candidate_id"],
        }
        for r in cands
    )
    model = with_changes(rel.cfg, model=rel.cfg.verdict_model) if rel.cfg.verdict_model else rel.cfg
    stage = judging(model, dict(rel.rulebase.verdicts), rel.generation.progress)
    result = run_stage(stage, [it for it in items if it.scope == "response"], rel.store, rel.executor)
    got = {r["response_id"]: r for r in result.rows}
    options = verdict_options(stage.settings["ranking"])
    verdicts: dict[str, int] = {}
    with text_writer(out / VERDICTS_FILE) as fh:
        for r in cands:
            row = got.get(r["candidate_id"])
            if row is None:  # recorded as not judged, never given a default verdict
                rec = VerdictRecord(r["candidate_id"], "not_judged", None, None, None, None, None)
            else:
                probs = json.loads(row["probs_json"])
                rec = VerdictRecord(
                    r["candidate_id"],
                    "ok",
                    tuple(probs[v] for v in options),
                    row["mass"],
                    row["model_id"],
                    row["model_revision"],
                    row["template_hash"],
                )
                verdicts[row["verdict"]] = verdicts.get(row["verdict"], 0) + 1
            line = json.loads(verdict_record_json(rec, r["prompt_id"], options))
            fh.write(jsonl_line({**line, "engine": result.stats["engine"]}))
    return {
        "candidates": len(cands),
        "judged": len(got),
        "not_judged": len(cands) - len(got),
        "malformed": len(failures),
        "verdicts": verdicts,
        "computed": result.computed,
        "cached": result.cached,
    }


def _attrs(label: dict | None) -> dict[str, Any]:
    if label is None:  # the labeler could not take this item: recorded, never defaulted
        return {"attributes": None, "parse_status": "not_labeled", "raw_output": None, "label_mass": None}
    attrs = json.loads(label["attributes_json"]) if label.get("attributes_json") else None
    return {
        "attributes": attrs,
        "parse_status": label["status"],
        "raw_output": label.get("raw_text"),
        # Constrained mode: the probability the answer letters held per attribute (the rest is off-label).
        "label_mass": json.loads(label["mass_json"]) if label.get("mass_json") else None,
    }


def _model_identity(labels: list[dict[str, Any]]) -> dict[str, Any]:
    """The labeler's model and template, as its rows record them (every row names the same)."""
    first = labels[0] if labels else {}
    return {k: first.get(k) for k in ("model_id", "model_revision", "template_hash")}


def _record(prompt: dict, label: dict | None) -> dict[str, Any]:
    return {
        "prompt_id": prompt["prompt_id"],
        "source": prompt["source"],
        "source_category": prompt["category"],
        "prompt": prompt["prompt"],
        **_attrs(label),
    }
