"""Verdict-judge labels of SPL pairs: the comparison condition of the source paper (Tables IX, X).

A verdict judge reads the prompt and one response and gives a probability to each verdict of the
rule base; the response's verdict is the most probable one. Two responses are ranked by the rule
base's fixed verdict ranking (no margin): the higher rank is preferred, equal ranks give no label.

The recorded components are each response's probabilities (in the judge's option order, best
verdict first), the probability mass the judge put on the options, its status and the judge's
identity; verdicts, ranks, label and reason are recomputed from them by :func:`judge_codes`, the one
function both the build and the audit use. Pure Arrow/numpy: no model, no I/O.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from datasets import Features, List, Value

from spl_hf.contract import MESSAGES, combine, hash_array
from spl_hf.derive.derivation import assistant_messages
from spl_hf.derive.features import DIGEST_COLUMNS, derived_features, pair_features
from spl_hf.errors import SplHfError
from spl_hf.rules import RuleBase
from spl_hf.schema import AttributeSchema

JUDGE_COLUMN = "judge"
JUDGE_NO_LABEL_REASONS = (
    "missing_verdict",  # a response was not judged (its status says why): never replaced by a default
    "equal_ranks",  # both verdicts have the same rank
)
VERDICT_RECORD_KEYS = (
    "prompt_id",
    "candidate_id",
    "status",
    "probs",
    "mass",
    "model_id",
    "model_revision",
    "template_hash",
)
# Judge fields folded into the digest; the rest of the struct is recomputed from these by the audit.
JUDGE_DIGEST_FIELDS = (
    "candidate_a",
    "candidate_b",
    "status_a",
    "status_b",
    "options",
    "probs_a",
    "probs_b",
    "mass_a",
    "mass_b",
    "model_id",
    "model_revision",
    "template_hash",
    "rulebase_hash",
)


def verdict_options(ranking: Mapping[str, int]) -> tuple[str, ...]:
    """The judge's option order: best rank first, names breaking ties (fixed by the rule base)."""
    return tuple(sorted(ranking, key=lambda v: (-ranking[v], v)))


def judge_struct() -> dict:
    return {
        "candidate_a": Value("string"),
        "candidate_b": Value("string"),
        "status_a": Value("string"),
        "status_b": Value("string"),
        "options": List(Value("string")),
        "probs_a": List(Value("float64")),
        "probs_b": List(Value("float64")),
        "mass_a": Value("float64"),
        "mass_b": Value("float64"),
        "verdict_a": Value("string"),
        "verdict_b": Value("string"),
        "rank_a": Value("int32"),
        "rank_b": Value("int32"),
        "label": Value("string"),
        "no_label_reason": Value("string"),
        "model_id": Value("string"),
        "model_revision": Value("string"),
        "template_hash": Value("string"),
        "rulebase_hash": Value("string"),
        "digest": Value("string"),
    }


def judge_features(schema: AttributeSchema) -> Features:
    """Every pair with its judge derivation and DPO messages under the judge label (``judge_derivations``)."""
    feats = pair_features(schema)
    feats[JUDGE_COLUMN] = judge_struct()
    feats["chosen"] = MESSAGES
    feats["rejected"] = MESSAGES
    return feats


def common_features(schema: AttributeSchema) -> Features:
    """A common-support row: the SPL derivation and the judge derivation side by side."""
    feats = derived_features(schema)
    feats[JUDGE_COLUMN] = judge_struct()
    return feats


@dataclass(frozen=True)
class VerdictRecord:
    """One response's recorded judgement; ``probs`` is None when it was not judged (``status`` says why)."""

    candidate_id: str
    status: str
    probs: tuple[float, ...] | None
    mass: float | None
    model_id: str | None
    model_revision: str | None
    template_hash: str | None


def parse_verdict_records(
    rows: Sequence[Mapping], ranking: Mapping[str, int], where: str
) -> dict[str, VerdictRecord]:
    """Verdict records keyed by candidate id, validated field by field (``where``: file name for errors).

    ``probs`` maps every verdict of the ranking to a probability; a record whose status is not
    ``ok`` carries no probabilities. Rows written by `spl-hf label --task verdict` are read as well.
    """
    options = verdict_options(ranking)
    out: dict[str, VerdictRecord] = {}
    judge: tuple[str | None, str | None, str | None] | None = None
    for row in rows:
        at = f"{where}:{row.get('_line', '?')}"
        row = _from_label_row(row, at)
        missing = [k for k in VERDICT_RECORD_KEYS if k not in row]
        if missing:
            raise SplHfError(f"{at}: missing fields {missing}")
        cid, status = row["candidate_id"], row["status"]
        if not isinstance(cid, str) or not cid:
            raise SplHfError(f"{at}: field 'candidate_id' must be a non-empty string")
        if cid in out:
            raise SplHfError(f"{at}: duplicate candidate_id {cid!r}")
        if not isinstance(status, str) or not status:
            raise SplHfError(f"{at}: field 'status' must be a non-empty string")
        probs = row["probs"]
        if status != "ok":
            if probs is not None:
                raise SplHfError(
                    f"{at}: status {status!r} but 'probs' is set (only judged responses have them)"
                )
            out[cid] = VerdictRecord(cid, status, None, None, *_identity(row, at))
            continue
        if not isinstance(probs, dict) or set(probs) != set(options):
            got = sorted(probs) if isinstance(probs, dict) else type(probs).__name__
            raise SplHfError(
                f"{at}: field 'probs' must map each verdict {list(options)} to a probability, got {got}"
            )
        values = tuple(probs[v] for v in options)
        if not all(
            isinstance(p, (int, float)) and not isinstance(p, bool) and math.isfinite(p) and 0 <= p <= 1
            for p in values
        ):
            raise SplHfError(f"{at}: field 'probs' holds a value that is not a probability: {values}")
        mass = row["mass"]
        if not isinstance(mass, (int, float)) or isinstance(mass, bool) or not math.isfinite(mass):
            raise SplHfError(f"{at}: field 'mass' must be a number, got {mass!r}")
        ident = _identity(row, at)
        judge = judge or ident
        if ident != judge:
            raise SplHfError(
                f"{at}: judged by {ident}, earlier records by {judge}: one build compares against one judge"
            )
        out[cid] = VerdictRecord(cid, status, tuple(float(p) for p in values), float(mass), *ident)
    return out


def _from_label_row(row: Mapping, at: str) -> Mapping:
    """A row of `spl-hf label --task verdict` (``response_id``, ``probs_json``) as a verdict record: the
    candidates were labeled with their candidate ids as response ids, and every written row was judged."""
    if "candidate_id" in row or "probs_json" not in row or "response_id" not in row:
        return row
    try:
        probs = json.loads(row["probs_json"])
    except (TypeError, ValueError):
        raise SplHfError(f"{at}: field 'probs_json' is not JSON") from None
    return {**row, "candidate_id": row["response_id"], "status": "ok", "probs": probs}


def _identity(row: Mapping, at: str) -> tuple[str | None, str | None, str | None]:
    vals = tuple(row[k] for k in ("model_id", "model_revision", "template_hash"))
    for k, v in zip(("model_id", "model_revision", "template_hash"), vals, strict=True):
        if v is not None and not isinstance(v, str):
            raise SplHfError(f"{at}: field {k!r} must be a string or null, got {v!r}")
    return vals  # type: ignore[return-value]


def verdict_record_json(record: VerdictRecord, prompt_id: str, options: Sequence[str]) -> str:
    """One line of a verdict file (what :func:`parse_verdict_records` reads)."""
    probs = dict(zip(options, record.probs, strict=True)) if record.probs is not None else None
    return json.dumps(
        {
            "prompt_id": prompt_id,
            "candidate_id": record.candidate_id,
            "status": record.status,
            "probs": probs,
            "mass": record.mass,
            "model_id": record.model_id,
            "model_revision": record.model_revision,
            "template_hash": record.template_hash,
        },
        sort_keys=True,
    )


@dataclass(frozen=True)
class JudgeCodes:
    """Recomputed judge derivation of a batch as numpy arrays."""

    verdict_a: np.ndarray  # int64 index into the options, -1 when not judged (or -2: probs malformed)
    verdict_b: np.ndarray
    rank_a: np.ndarray
    rank_b: np.ndarray
    reason: np.ndarray  # index into JUDGE_NO_LABEL_REASONS, -1 when labeled
    label_a: np.ndarray  # labeled and a preferred

    @property
    def labeled(self) -> np.ndarray:
        return self.reason < 0


def _argmax_lists(probs: pa.Array, width: int) -> np.ndarray:
    """First most probable option per row; -1 for a null list, -2 for one of the wrong length or with nulls."""
    probs = probs.combine_chunks() if isinstance(probs, pa.ChunkedArray) else probs
    lengths = np.asarray(
        pc.list_value_length(probs).fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64
    )
    out = np.where(lengths < 0, -1, -2).astype(np.int64)
    ok = lengths == width
    if not ok.any() or width == 0:
        return out
    flat = pc.list_flatten(probs.filter(pa.array(ok)))
    values = np.asarray(flat.fill_null(np.nan).to_numpy(zero_copy_only=False), dtype=np.float64).reshape(
        -1, width
    )
    good = ~np.isnan(values).any(axis=1)
    rows = np.flatnonzero(ok)
    # np.argmax takes the first maximum: ties go to the better-ranked option, as the judge does.
    out[rows[good]] = np.argmax(values[good], axis=1)
    return out


def judge_codes(probs_a: pa.Array, probs_b: pa.Array, ranking: Mapping[str, int]) -> JudgeCodes:
    options = verdict_options(ranking)
    ranks = np.array([ranking[v] for v in options], dtype=np.int64)
    va, vb = _argmax_lists(probs_a, len(options)), _argmax_lists(probs_b, len(options))
    ra, rb_ = ranks[np.maximum(va, 0)], ranks[np.maximum(vb, 0)]
    judged = (va >= 0) & (vb >= 0)
    reason = np.where(~judged, 0, np.where(ra == rb_, 1, -1)).astype(np.int64)
    return JudgeCodes(va, vb, ra, rb_, reason, (reason < 0) & (ra > rb_))


def judge_digests(pairs: pa.Table, fields: Mapping[str, pa.Array]) -> pa.Array:
    hashes = [hash_array(pairs.column(c)) for c in DIGEST_COLUMNS]
    hashes += [hash_array(fields[f]) for f in JUDGE_DIGEST_FIELDS]
    return combine(hashes)


def judge_identity(verdicts: Mapping[str, VerdictRecord]) -> tuple[str | None, str | None, str | None]:
    """The one judge (model, revision, prompt template) behind a set of verdicts."""
    seen = {(r.model_id, r.model_revision, r.template_hash) for r in verdicts.values() if r.probs is not None}
    if len(seen) > 1:
        raise SplHfError(
            f"verdicts come from {len(seen)} different judges {sorted(seen, key=str)}: one build "
            "compares against one judge"
        )
    return seen.pop() if seen else (None, None, None)


def _strings(values: Sequence[str | None]) -> pa.Array:
    return pa.array(list(values), pa.string())


def judge_column(
    pairs: pa.Table,
    candidate_a: Sequence[str],
    candidate_b: Sequence[str],
    verdicts: Mapping[str, VerdictRecord],
    rb: RuleBase,
) -> pa.StructArray:
    """The ``judge`` struct of every pair. A candidate the verdict file does not cover is recorded
    with status ``no_record`` and gives its pairs no label."""
    ranking = dict(rb.verdicts)
    options = verdict_options(ranking)
    n = pairs.num_rows
    recs = {side: [verdicts.get(c) for c in ids] for side, ids in (("a", candidate_a), ("b", candidate_b))}
    fields: dict[str, pa.Array] = {"candidate_a": _strings(candidate_a), "candidate_b": _strings(candidate_b)}
    for side in "ab":
        fields[f"status_{side}"] = _strings([r.status if r else "no_record" for r in recs[side]])
    fields["options"] = pa.array([list(options)] * n, pa.list_(pa.string()))
    for side in "ab":
        fields[f"probs_{side}"] = pa.array(
            [list(r.probs) if r and r.probs is not None else None for r in recs[side]], pa.list_(pa.float64())
        )
        fields[f"mass_{side}"] = pa.array([r.mass if r else None for r in recs[side]], pa.float64())
    c = judge_codes(fields["probs_a"], fields["probs_b"], ranking)
    names = pa.array(list(options), pa.string())
    for side, v, r in (("a", c.verdict_a, c.rank_a), ("b", c.verdict_b, c.rank_b)):
        fields[f"verdict_{side}"] = names.take(pa.array(np.maximum(v, 0), mask=v < 0))
        fields[f"rank_{side}"] = pa.array(r, pa.int32(), mask=v < 0)
    fields["label"] = pa.array(np.where(c.label_a, "a", "b").astype(object), pa.string(), mask=~c.labeled)
    fields["no_label_reason"] = pa.array(JUDGE_NO_LABEL_REASONS).take(
        pa.array(np.maximum(c.reason, 0), mask=c.labeled)
    )
    identity = judge_identity(verdicts)
    for k, v in zip(("model_id", "model_revision", "template_hash"), identity, strict=True):
        fields[k] = pa.array(np.full(n, v, dtype=object), pa.string())
    fields["rulebase_hash"] = pa.array(np.full(n, rb.hash, dtype=object), pa.string())
    fields["digest"] = judge_digests(pairs, fields)
    order = list(judge_struct())
    return pa.StructArray.from_arrays([fields[k] for k in order], names=order)


def judge_messages(table: pa.Table, codes: JudgeCodes) -> tuple[pa.Array, pa.Array]:
    """``chosen`` and ``rejected`` under the judge label (null where it gives none)."""
    resp_a = table.column("response_a").combine_chunks()
    resp_b = table.column("response_b").combine_chunks()
    pick_a = pa.array(codes.label_a)
    return (
        assistant_messages(pc.if_else(pick_a, resp_a, resp_b), codes.labeled),
        assistant_messages(pc.if_else(pick_a, resp_b, resp_a), codes.labeled),
    )


class JudgeTables(NamedTuple):
    derivations: pa.Table  # every pair: its columns, its judge derivation, messages under the judge label
    common: pa.Table  # pairs labeled by both, messages under the SPL (prompt-shared) label
    common_judge: pa.Table  # the same pairs, messages under the judge label


def common_mask(derivation: pa.Array, judge: pa.Array) -> np.ndarray:
    """Common support: pairs with both an SPL label and a judge label."""
    both = pc.and_(
        pc.is_valid(pc.struct_field(derivation, "label")), pc.is_valid(pc.struct_field(judge, "label"))
    )
    return np.asarray(both.to_numpy(zero_copy_only=False), dtype=bool)


def judge_tables(derived: pa.Table, judge: pa.StructArray, rb: RuleBase) -> JudgeTables:
    """The three judge configs of an SPL build from its derived pairs and their ``judge`` column."""
    schema = rb.schema
    codes = judge_codes(judge.field("probs_a"), judge.field("probs_b"), dict(rb.verdicts))
    pairs = derived.select(list(pair_features(schema)))
    chosen, rejected = judge_messages(pairs, codes)
    derivations = (
        pairs.append_column(JUDGE_COLUMN, judge)
        .append_column("chosen", chosen)
        .append_column("rejected", rejected)
        .cast(judge_features(schema).arrow_schema)
    )
    keep = pa.array(common_mask(derived.column("derivation").combine_chunks(), judge))
    common = derived.append_column(JUDGE_COLUMN, judge).filter(keep)
    common = common.select(list(common_features(schema))).cast(common_features(schema).arrow_schema)
    picked = derivations.filter(keep)
    common_judge = common.set_column(
        common.schema.get_field_index("chosen"), "chosen", picked.column("chosen")
    )
    common_judge = common_judge.set_column(
        common.schema.get_field_index("rejected"), "rejected", picked.column("rejected")
    )
    return JudgeTables(derivations, common, common_judge)
