"""Candidate pairs from recorded attribute assignments of prompts and candidate responses.

Prompt attributes are recorded once per prompt and shared by every pair of its candidates
(prompt-attribute sharing); response attributes belong to each (prompt, response).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import NamedTuple

import pyarrow as pa

from spl_hf.contract import identity_key, record_identity
from spl_hf.derive.features import pair_features
from spl_hf.errors import SplHfError
from spl_hf.jsonl import read_rows
from spl_hf.schema import AttributeSchema

PROMPT_KEYS = ("prompt_id", "source", "source_category", "prompt", "attributes", "parse_status")
CANDIDATE_KEYS = ("prompt_id", "candidate_id", "instruction", "response", "attributes", "parse_status")


def read_jsonl(path: str | Path) -> list[dict]:
    """Records of a JSON Lines file, each with its line number under ``_line`` for error messages."""
    if Path(path).suffix not in (".jsonl", ".json"):
        raise SplHfError(f"{path}: expected a JSON Lines file (.jsonl)")
    return read_rows(path, line_key="_line")


def _check_attributes(rec: Mapping, scope: str, schema: AttributeSchema, where: str) -> dict | None:
    attrs = rec.get("attributes")
    status = rec.get("parse_status")
    if attrs is None:
        if status == "ok":
            raise SplHfError(f"{where}: parse_status is 'ok' but attributes are missing")
        return None
    if not isinstance(attrs, dict):
        raise SplHfError(f"{where}: attributes must be an object or null")
    expected = set(schema.names(scope))  # type: ignore[arg-type]
    if set(attrs) != expected:
        raise SplHfError(
            f"{where}: attributes must have exactly {sorted(expected)}; "
            f"missing {sorted(expected - set(attrs))}, unknown {sorted(set(attrs) - expected)}"
        )
    for name, value in attrs.items():
        attr = schema.attribute(name)
        if value is None:
            continue
        if attr.kind == "bool" and not isinstance(value, bool):
            raise SplHfError(f"{where}: attribute {name!r} must be true/false/null, got {value!r}")
        if attr.kind == "category" and value not in attr.values:
            raise SplHfError(f"{where}: attribute {name!r} has value {value!r} outside {list(attr.values)}")
    return dict(attrs)


class CandidatePairs(NamedTuple):
    table: pa.Table  # the pair table (columns of :func:`pair_features`)
    candidate_a: list[str]  # per pair, the candidate_id of response a
    candidate_b: list[str]


def pairs_from_records(
    prompts: Iterable[Mapping],
    candidates: Iterable[Mapping],
    schema: AttributeSchema,
    prompts_file: str = "prompts",
    candidates_file: str = "candidates",
) -> pa.Table:
    """Every unordered pair of candidates of each prompt, in record order, as a pair table."""
    return candidate_pairs(prompts, candidates, schema, prompts_file, candidates_file).table


def candidate_pairs(
    prompts: Iterable[Mapping],
    candidates: Iterable[Mapping],
    schema: AttributeSchema,
    prompts_file: str = "prompts",
    candidates_file: str = "candidates",
) -> CandidatePairs:
    """The pair table with the candidate ids behind each pair (a pair id alone cannot be split
    back into them when candidate ids hold its separator)."""
    by_prompt = _prompt_records(prompts, schema, prompts_file)
    _add_candidates(by_prompt, candidates, schema, candidates_file)
    rows, ids_a, ids_b = [], [], []
    for pid, p in by_prompt.items():
        for a, b in itertools.combinations(p["candidates"], 2):
            ids_a.append(a["candidate_id"])
            ids_b.append(b["candidate_id"])
            rows.append(_pair_row(pid, p, a, b))
    return CandidatePairs(pa.Table.from_pylist(rows, schema=pair_features(schema).arrow_schema), ids_a, ids_b)


def _prompt_records(
    prompts: Iterable[Mapping], schema: AttributeSchema, prompts_file: str
) -> dict[str, dict]:
    """prompt_id -> the checked prompt record, its labeler key and an empty candidate list."""
    by_prompt: dict[str, dict] = {}
    for rec in prompts:
        where = f"{prompts_file}:{rec.get('_line', '?')}"
        missing = [k for k in PROMPT_KEYS if k not in rec]
        if missing:
            raise SplHfError(f"{where}: missing fields {missing}")
        if not isinstance(rec["prompt"], str) or not rec["prompt"].strip():
            raise SplHfError(f"{where}: field 'prompt' must be a non-empty string")
        if rec["prompt_id"] in by_prompt:
            raise SplHfError(f"{where}: duplicate prompt_id {rec['prompt_id']!r}")
        by_prompt[rec["prompt_id"]] = {
            **rec,
            "attributes": _check_attributes(rec, "prompt", schema, where),
            "labeler_key": identity_key(record_identity(rec, "labeler", prompts_file)),
            "candidates": [],
        }
    return by_prompt


def _add_candidates(
    by_prompt: dict[str, dict], candidates: Iterable[Mapping], schema: AttributeSchema, candidates_file: str
) -> None:
    """Each checked candidate record, with its labeler and generator keys, under its prompt."""
    seen: set[str] = set()
    for rec in candidates:
        where = f"{candidates_file}:{rec.get('_line', '?')}"
        missing = [k for k in CANDIDATE_KEYS if k not in rec]
        if missing:
            raise SplHfError(f"{where}: missing fields {missing}")
        if rec["prompt_id"] not in by_prompt:
            raise SplHfError(f"{where}: unknown prompt_id {rec['prompt_id']!r}")
        if rec["candidate_id"] in seen:
            raise SplHfError(f"{where}: duplicate candidate_id {rec['candidate_id']!r}")
        if not isinstance(rec["response"], str):
            raise SplHfError(f"{where}: field 'response' must be a string")
        seen.add(rec["candidate_id"])
        by_prompt[rec["prompt_id"]]["candidates"].append(
            {
                **rec,
                "attributes": _check_attributes(rec, "response", schema, where),
                "labeler_key": identity_key(record_identity(rec, "labeler", candidates_file)),
                "generator_key": identity_key(record_identity(rec, "generator", candidates_file)),
            }
        )


def _pair_row(pid: str, p: Mapping, a: Mapping, b: Mapping) -> dict:
    """One candidate pair of prompt ``p``: texts, attributes, parse statuses and producer keys."""
    return {
        "pair_id": f"{a['candidate_id']}__{b['candidate_id']}",
        "prompt_id": pid,
        "source": p["source"],
        "source_category": p["source_category"],
        "prompt": [{"role": "user", "content": p["prompt"]}],
        "response_a": a["response"],
        "response_b": b["response"],
        "instruction_a": a["instruction"],
        "instruction_b": b["instruction"],
        "prompt_attributes": p["attributes"],
        "response_a_attributes": a["attributes"],
        "response_b_attributes": b["attributes"],
        "attribute_status": {
            "prompt": p["parse_status"],
            "response_a": a["parse_status"],
            "response_b": b["parse_status"],
        },
        "producers": {
            "prompt_labeler": p["labeler_key"],
            "response_a_labeler": a["labeler_key"],
            "response_b_labeler": b["labeler_key"],
            "response_a_generator": a["generator_key"],
            "response_b_generator": b["generator_key"],
        },
    }


def apply_labels(records: list[dict], label_rows: Iterable[Mapping], scope: str) -> list[dict]:
    """Replace the attributes of prompt (``scope="prompt"``) or candidate records with labeler output.

    Label rows come from :class:`spl_hf.backends.AttributeLabeler` (``status``, ``attributes_json``,
    keyed by ``prompt_id`` or ``response_id``). A record the labeler did not return raises; an
    unparsed label keeps its status and raw text and leaves the attributes null.
    """
    key = "prompt_id" if scope == "prompt" else "response_id"
    rec_key = "prompt_id" if scope == "prompt" else "candidate_id"
    by_id = {r[key]: r for r in label_rows if r.get("scope") == scope}
    out = []
    for rec in records:
        label = by_id.get(rec[rec_key])
        if label is None:
            raise SplHfError(f"no {scope} label for {rec_key} {rec[rec_key]!r}")
        attrs = json.loads(label["attributes_json"]) if label.get("attributes_json") else None
        out.append(
            {**rec, "attributes": attrs, "parse_status": label["status"], "raw_output": label.get("raw_text")}
        )
    return out
