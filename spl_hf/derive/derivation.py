"""Deriving SPL preference labels from recorded attribute assignments, batch-wise in Arrow.

``derive_table`` is a pure function from a table of candidate pairs (with prompt and
response attribute assignments) to the same rows with their recorded derivation:
applied rules, verdicts, ranks, rank difference, label or no-label reason, rule-base id
and hash, the DPO ``chosen``/``rejected`` messages and a per-row digest. Everything is
vectorised over the batch; ``derive_row`` is the per-row reference used to cross-check.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from spl_hf.contract import combine, combine_scalar, hash_array, hash_value
from spl_hf.derive.features import (
    DIGEST_COLUMNS,
    DIGEST_DERIVATION_FIELDS,
    NO_LABEL_REASONS,
    derived_features,
    pair_features,
)
from spl_hf.errors import SplHfError
from spl_hf.rules import CONFLICT, NO_VERDICT, RuleBase, apply_rules, apply_rules_row

MISSING = -3  # verdict code for a response whose attributes (or its prompt's) are missing


@dataclass(frozen=True)
class EncodedAttributes:
    columns: dict[str, np.ndarray]  # bool arrays, int16 category codes
    missing: np.ndarray  # (n,) bool: some attribute of this scope is null (or invalid, when not strict)
    invalid: np.ndarray  # (n,) bool: some category value lies outside the schema


def column_array(table: pa.Table, name: str) -> pa.Array:
    """A column as one array: its only chunk as is (``combine_chunks`` would copy it, text and all)."""
    col = table.column(name)
    return col.chunk(0) if col.num_chunks == 1 else col.combine_chunks()


def filled(a: pa.Array, value: object, dtype: type) -> np.ndarray:
    """``a`` as numpy ``dtype`` with nulls replaced by ``value`` (no fill pass when there are none)."""
    if a.null_count:
        a = a.fill_null(value)
    return np.asarray(a.to_numpy(zero_copy_only=False), dtype=dtype)


def encode_attributes(
    table: pa.Table, column: str, rb: RuleBase, scope: str, strict: bool = True
) -> EncodedAttributes:
    """Turn a struct column of attribute values into arrays the rule evaluator reads.

    A category value outside the schema raises ``ValueError`` naming the rows and field; with
    ``strict=False`` (audit) such rows are marked ``invalid`` and treated as missing instead.
    """
    arr = column_array(table, column)
    n = len(arr)
    missing = np.asarray(arr.is_null().to_numpy(zero_copy_only=False), dtype=bool).copy()
    attrs = rb.schema.prompt if scope == "prompt" else rb.schema.response
    fields = {f.name for f in arr.type}
    cols: dict[str, np.ndarray] = {}
    invalid = np.zeros(n, dtype=bool)
    for attr in attrs:
        if attr.name not in fields:
            raise SplHfError(f"column {column!r} has no field {attr.name!r}")
        child = pc.struct_field(arr, attr.name)
        null = np.asarray(child.is_null().to_numpy(zero_copy_only=False), dtype=bool)
        missing |= null
        if attr.kind == "bool":
            cols[attr.name] = filled(child, False, bool)
        else:
            codes = pc.index_in(child, value_set=pa.array(attr.values))
            bad_mask = codes.is_null().to_numpy(zero_copy_only=False) & ~null
            invalid |= bad_mask
            bad = np.flatnonzero(bad_mask)
            if len(bad) and strict:
                ids = table.column("pair_id").take(pa.array(bad[:5])).to_pylist()
                vals = child.take(pa.array(bad[:5])).to_pylist()
                raise SplHfError(
                    f"{column}.{attr.name}: {len(bad)} row(s) with values outside the schema, e.g. "
                    + ", ".join(f"row {i} ({pid}): {v!r}" for i, pid, v in zip(bad[:5], ids, vals))
                )
            cols[attr.name] = np.asarray(codes.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int16)
    return EncodedAttributes(cols, missing | invalid, invalid)


def _rule_lists(applied: np.ndarray, rb: RuleBase) -> pa.ListArray:
    rows, rules = np.nonzero(applied)  # row-major, so each row's rules keep rule-base order
    offsets = np.zeros(len(applied) + 1, dtype=np.int32)
    np.cumsum(np.bincount(rows, minlength=len(applied)), out=offsets[1:])
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(rb.rule_ids).take(pa.array(rules)))


def assistant_messages(content: pa.Array, keep: np.ndarray) -> pa.ListArray:
    """One assistant message per kept row, null elsewhere."""
    kept = content.filter(pa.array(keep))
    offsets = np.zeros(len(keep) + 1, dtype=np.int32)
    np.cumsum(keep, out=offsets[1:])
    values = pa.StructArray.from_arrays(
        [pa.array(np.full(len(kept), "assistant", dtype=object), pa.string()), kept],
        names=["role", "content"],
    )
    return pa.ListArray.from_arrays(pa.array(offsets), values, mask=pa.array(~keep))


def _side(rb: RuleBase, prompt: EncodedAttributes, resp: EncodedAttributes, n: int):
    app = apply_rules(rb, {**prompt.columns, **resp.columns}, n)
    missing = prompt.missing | resp.missing
    applied = np.where(missing[:, None], False, app.applied)
    verdict = np.where(missing, MISSING, app.verdict).astype(np.int16)
    return applied, verdict


def row_digests(table: pa.Table, derivation_fields: dict[str, pa.Array]) -> pa.Array:
    hashes = [hash_array(table.column(c)) for c in DIGEST_COLUMNS]
    hashes += [hash_array(derivation_fields[f]) for f in DIGEST_DERIVATION_FIELDS]
    return combine(hashes)


@dataclass(frozen=True)
class DerivationCodes:
    """The derivation of a batch as numpy arrays (before any Arrow strings are built)."""

    applied_a: np.ndarray  # (n, n_rules) bool
    applied_b: np.ndarray
    verdict_a: np.ndarray  # int16 index into rb.verdict_names, or NO_VERDICT / CONFLICT / MISSING
    verdict_b: np.ndarray
    rank_a: np.ndarray  # int32, valid where verdict_a >= 0
    rank_b: np.ndarray
    reason: np.ndarray  # int8 index into NO_LABEL_REASONS, -1 when labeled
    label_a: np.ndarray  # bool: labeled and a preferred
    margins: np.ndarray
    invalid: np.ndarray  # bool: an attribute value outside the schema (only when not strict)

    @property
    def labeled(self) -> np.ndarray:
        return self.reason < 0

    @property
    def diff(self) -> np.ndarray:
        return self.rank_a - self.rank_b

    @property
    def has_diff(self) -> np.ndarray:
        return (self.verdict_a >= 0) & (self.verdict_b >= 0)


def _prepare(table: pa.Table, rb: RuleBase) -> pa.Table:
    in_feats = pair_features(rb.schema)
    missing_cols = [c for c in in_feats if c not in table.column_names]
    if missing_cols:
        raise SplHfError(f"pair table lacks columns {missing_cols}")
    return table.select(list(in_feats)).cast(in_feats.arrow_schema)


def derive_codes(
    table: pa.Table, rb: RuleBase, margin: int | np.ndarray = 1, strict: bool = True
) -> DerivationCodes:
    """Applied rules, verdicts, ranks and label of every row, as arrays."""
    n = table.num_rows
    margins = np.broadcast_to(np.asarray(margin, dtype=np.int32), (n,))
    if n and (margins < 1).any():
        raise SplHfError(f"margin must be at least 1, got {int(margins.min())}")
    prompt = encode_attributes(table, "prompt_attributes", rb, "prompt", strict)
    resp_a = encode_attributes(table, "response_a_attributes", rb, "response", strict)
    resp_b = encode_attributes(table, "response_b_attributes", rb, "response", strict)
    app_a, va = _side(rb, prompt, resp_a, n)
    app_b, vb = _side(rb, prompt, resp_b, n)

    ranks = np.array([rb.verdicts[v] for v in rb.verdict_names], dtype=np.int32)
    has_a, has_b = va >= 0, vb >= 0
    rank_a = np.where(has_a, ranks[np.maximum(va, 0)], 0).astype(np.int32)
    rank_b = np.where(has_b, ranks[np.maximum(vb, 0)], 0).astype(np.int32)
    diff = rank_a - rank_b
    both = has_a & has_b
    reason = np.full(n, -1, dtype=np.int8)
    for code, cond in enumerate(
        (
            (va == MISSING) | (vb == MISSING),
            (va == CONFLICT) | (vb == CONFLICT),
            (va == NO_VERDICT) | (vb == NO_VERDICT),
            both & (diff == 0),
            both & (diff != 0) & (np.abs(diff) < margins),
        )
    ):
        reason = np.where((reason < 0) & cond, code, reason)
    label_a = (reason < 0) & (diff > 0)
    invalid = prompt.invalid | resp_a.invalid | resp_b.invalid
    return DerivationCodes(app_a, app_b, va, vb, rank_a, rank_b, reason, label_a, margins, invalid)


def derive_table(
    table: pa.Table, rb: RuleBase, margin: int | np.ndarray = 1, *, digest: bool = True, strict: bool = True
) -> pa.Table:
    """Derive labels for a table of candidate pairs (columns of :func:`pair_features`).

    ``digest=False`` leaves the digest null and ``strict=False`` treats out-of-schema values as
    missing (both for recomputation during audit).
    """
    table = _prepare(table, rb)
    n = table.num_rows
    c = derive_codes(table, rb, margin, strict)
    labeled, label_a, has_a, has_b = c.labeled, c.label_a, c.verdict_a >= 0, c.verdict_b >= 0
    va, vb, margins, reason = c.verdict_a, c.verdict_b, c.margins, c.reason
    verdict_names = pa.array(rb.verdict_names)

    def verdict_array(v: np.ndarray) -> pa.Array:
        return verdict_names.take(pa.array(np.maximum(v, 0), mask=v < 0))

    fields: dict[str, pa.Array] = {
        "rules_a": _rule_lists(c.applied_a, rb),
        "rules_b": _rule_lists(c.applied_b, rb),
        "verdict_a": verdict_array(va),
        "verdict_b": verdict_array(vb),
        "rank_a": pa.array(c.rank_a, pa.int32(), mask=~has_a),
        "rank_b": pa.array(c.rank_b, pa.int32(), mask=~has_b),
        "rank_diff": pa.array(c.diff, pa.int32(), mask=~c.has_diff),
        "label": pa.array(np.where(label_a, "a", "b").astype(object), pa.string(), mask=~labeled),
        "no_label_reason": pa.array(NO_LABEL_REASONS).take(pa.array(np.maximum(reason, 0), mask=labeled)),
        "margin": pa.array(margins, pa.int32()),
        "rulebase_id": pa.array(np.full(n, rb.id, dtype=object), pa.string()),
        "rulebase_hash": pa.array(np.full(n, rb.hash, dtype=object), pa.string()),
    }
    fields["digest"] = row_digests(table, fields) if digest else pa.nulls(n, pa.string())
    resp_a = column_array(table, "response_a")
    resp_b = column_array(table, "response_b")
    out_feats = derived_features(rb.schema)
    derivation = pa.StructArray.from_arrays(list(fields.values()), names=list(fields))
    chosen = assistant_messages(pc.if_else(pa.array(label_a), resp_a, resp_b), labeled)
    rejected = assistant_messages(pc.if_else(pa.array(label_a), resp_b, resp_a), labeled)
    out = table.append_column("derivation", derivation).append_column("chosen", chosen)
    return out.append_column("rejected", rejected).cast(out_feats.arrow_schema)


# ---------------------------------------------------------------- per-row reference path
def derive_row(row: dict, rb: RuleBase, margin: int = 1) -> dict:
    """Per-row reference derivation over plain Python values (same result as ``derive_table``).

    A benign how-to question, answered (A) and refused (B), under the packaged rule base:

    >>> from spl_hf.rules import default_rulebase
    >>> row = {"pair_id": "p1", "prompt_id": "q1", "source": "ultrachat", "source_category": "benign",
    ...        "prompt": [{"role": "user", "content": "How do I bake bread?"}],
    ...        "response_a": "Mix flour...", "response_b": "I can't help.",
    ...        "instruction_a": "comply", "instruction_b": "refuse",
    ...        "prompt_attributes": {"topic": "benign", "knowledge": False, "historical": False,
    ...                              "fictional": False, "method": True, "steps": True},
    ...        "response_a_attributes": {"refusal": False, "provides_content": True, "partial": False,
    ...                                  "safe_alternative": False},
    ...        "response_b_attributes": {"refusal": True, "provides_content": False, "partial": False,
    ...                                  "safe_alternative": False},
    ...        "attribute_status": {"prompt": "ok", "response_a": "ok", "response_b": "ok"}}
    >>> d = derive_row(row, default_rulebase())
    >>> [d["derivation"][k] for k in ("rules_a", "verdict_a", "rules_b", "verdict_b", "label")]
    [['R6'], 'helpful_compliance', ['R1'], 'unjustified_refusal', 'a']
    >>> d["chosen"]
    [{'role': 'assistant', 'content': 'Mix flour...'}]
    """
    pa_attrs = row["prompt_attributes"]
    prompt_missing = pa_attrs is None or any(pa_attrs.get(a) is None for a in rb.schema.names("prompt"))
    sides = {}
    for side in ("a", "b"):
        ra = row[f"response_{side}_attributes"]
        missing = prompt_missing or ra is None or any(ra.get(a) is None for a in rb.schema.names("response"))
        if missing:
            sides[side] = ([], None, "missing")
            continue
        rules, verdict, conflict = apply_rules_row(rb, {**pa_attrs, **ra})
        sides[side] = (rules, verdict, "conflict" if conflict else ("none" if verdict is None else "ok"))
    (rules_a, v_a, s_a), (rules_b, v_b, s_b) = sides["a"], sides["b"]
    rank_a = rb.verdicts[v_a] if v_a is not None else None
    rank_b = rb.verdicts[v_b] if v_b is not None else None
    diff = rank_a - rank_b if rank_a is not None and rank_b is not None else None
    states = {s_a, s_b}
    if "missing" in states:
        reason = "missing_attributes"
    elif "conflict" in states:
        reason = "conflicting_verdicts"
    elif "none" in states:
        reason = "no_verdict"
    elif diff == 0:
        reason = "equal_ranks"
    elif abs(diff) < margin:  # type: ignore[arg-type]
        reason = "margin_not_met"
    else:
        reason = None
    label = None if reason else ("a" if diff > 0 else "b")  # type: ignore[operator]
    derivation = {
        "rules_a": rules_a,
        "rules_b": rules_b,
        "verdict_a": v_a,
        "verdict_b": v_b,
        "rank_a": rank_a,
        "rank_b": rank_b,
        "rank_diff": diff,
        "label": label,
        "no_label_reason": reason,
        "margin": margin,
        "rulebase_id": rb.id,
        "rulebase_hash": rb.hash,
    }
    derivation["digest"] = row_digest_scalar(row, derivation, rb)
    out = dict(row, derivation=derivation)
    if label is None:
        out["chosen"] = out["rejected"] = None
    else:
        win, lose = ("a", "b") if label == "a" else ("b", "a")
        out["chosen"] = [{"role": "assistant", "content": row[f"response_{win}"]}]
        out["rejected"] = [{"role": "assistant", "content": row[f"response_{lose}"]}]
    return out


def row_digest_scalar(row: dict, derivation: dict, rb: RuleBase) -> str:
    feats = pair_features(rb.schema).arrow_schema
    dfeats = pa.struct(
        [
            (k, t)
            for k, t in (
                (f.name, f.type) for f in derived_features(rb.schema).arrow_schema.field("derivation").type
            )
        ]
    )
    # A column the row lacks is null, as it is in a table built from such rows.
    hashes = [hash_value(row.get(c), feats.field(c).type) for c in DIGEST_COLUMNS]
    hashes += [hash_value(derivation[f], dfeats.field(f).type) for f in DIGEST_DERIVATION_FIELDS]
    return combine_scalar(hashes)
