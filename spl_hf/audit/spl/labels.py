"""Audit: recompute every label of a built SPL dataset from its recorded derivation alone.

No model is involved: verdicts, ranks, labels and the DPO messages are recomputed from the
stored attribute assignments with the rule base, and the row digest is recomputed from the
stored fields. With a different rule base the audit becomes a counterfactual diff: which
labels would change.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from spl_hf.contract import hash_array
from spl_hf.derive import (
    DIGEST_DERIVATION_FIELDS,
    NO_LABEL_REASONS,
    column_array,
    derive_codes,
    derive_table,
    derived_features,
    filled,
    pair_features,
    row_digests,
)
from spl_hf.errors import SplHfError
from spl_hf.rules import RuleBase

LABEL_FIELDS = ("verdict_a", "verdict_b", "label", "no_label_reason")


@dataclass(frozen=True)
class Mismatch:
    index: int
    pair_id: str
    fields: list[str]


@dataclass(frozen=True)
class LabelChange:
    index: int
    pair_id: str
    before: dict
    after: dict


@dataclass
class RuleAuditReport:
    rows: int = 0
    reproduced: int = 0
    mismatch_count: int = 0
    mismatches: list[Mismatch] = field(default_factory=list)
    rulebase_id: str = ""
    rulebase_hash: str = ""
    counterfactual: bool = False
    changed_labels: int = 0
    changes: list[LabelChange] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.mismatch_count == 0

    def to_dict(self) -> dict:
        d = asdict(self)
        if not self.counterfactual:
            for k in ("changed_labels", "changes"):
                d.pop(k)
        return d


def null_mask(a: pa.Array) -> np.ndarray:
    if not a.null_count:  # most stored fields: no Arrow pass for an all-false mask
        return np.zeros(len(a), dtype=bool)
    return np.asarray(a.is_null().to_numpy(zero_copy_only=False), dtype=bool)


def _list_lengths(a: pa.Array) -> np.ndarray:
    return filled(pc.list_value_length(a), -1, np.int64)


def differs(a: pa.Array, b: pa.Array) -> np.ndarray:
    """Per-row inequality of two arrays of the same type, treating null == null."""
    if pa.types.is_list(a.type):
        if pa.types.is_string(a.type.value_type):
            return differs(pc.binary_join(a, "\x1f"), pc.binary_join(b, "\x1f"))
        la, lb = _list_lengths(a), _list_lengths(b)
        if not np.array_equal(la, lb):
            return hash_array(a) != hash_array(b)
        # Same shape everywhere: compare the flattened elements directly (no hashing).
        fa, fb = pc.list_flatten(a), pc.list_flatten(b)
        elem = differs(fa, fb)
        parents = pc.list_parent_indices(a).to_numpy(zero_copy_only=False)
        return np.bincount(parents, weights=elem, minlength=len(a)) > 0
    if pa.types.is_struct(a.type):
        out = null_mask(a) != null_mask(b)
        for k in range(a.type.num_fields):
            out |= differs(pc.struct_field(a, k), pc.struct_field(b, k))
        return out
    same = filled(pc.equal(a, b), False, bool)
    return ~(same | (null_mask(a) & null_mask(b)))


def codes_of(values: pa.Array, names: tuple[str, ...] | list[str]) -> np.ndarray:
    """Index of each value in ``names``; -1 for null, -2 for a value not in ``names``."""
    idx = pc.index_in(values, value_set=pa.array(list(names), pa.string()))
    out = filled(idx, -2, np.int64)
    return np.where(null_mask(values), -1, out)


def int_differs(stored: pa.Array, expected: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Stored nullable ints against expected values that exist where ``valid``."""
    null = null_mask(stored)
    vals = filled(stored, 0, np.int64)
    return np.where(valid, null | (vals != expected), ~null)


def _rules_differ(stored: pa.Array, applied: np.ndarray, rb: RuleBase) -> np.ndarray:
    """Stored rule-id lists against the applied matrix: same rules, in rule-base order, no repeats."""
    n, n_rules = applied.shape
    if n_rules > 52:  # bit masks below are exact in float64 up to 52 rules
        expected = pa.ListArray.from_arrays(
            pa.array(np.concatenate([[0], np.cumsum(applied.sum(1))]).astype(np.int32)),
            pa.array(rb.rule_ids).take(pa.array(np.nonzero(applied)[1])),
        )
        return differs(stored, expected)
    flat = pc.list_flatten(stored)
    codes = codes_of(flat, rb.rule_ids)
    parents = pc.list_parent_indices(stored).to_numpy(zero_copy_only=False)
    bad = np.bincount(parents, weights=codes < 0, minlength=n) > 0
    same_row = parents[1:] == parents[:-1]
    bad[parents[1:][same_row & (codes[1:] <= codes[:-1])]] = True  # order and duplicates
    bits = np.bincount(parents, weights=np.exp2(np.maximum(codes, 0)), minlength=n)
    expected_bits = applied.astype(np.float64) @ np.exp2(np.arange(n_rules))
    return bad | (bits != expected_bits) | null_mask(stored)


def messages_differ(
    stored: pa.Array, want: np.ndarray, resp_a: pa.Array, resp_b: pa.Array, pick_a: np.ndarray
) -> np.ndarray:
    """Stored chosen/rejected against one assistant message holding the picked response (or null)."""
    lengths = _list_lengths(stored)
    bad = np.where(want, lengths != 1, lengths != -1)
    ok = want & ~bad
    if ok.any():
        # Each compared row holds exactly one message, at its list's first offset (into this slice's
        # messages, not the whole column's, so a batch costs its own rows only).
        offsets = np.asarray(stored.offsets, dtype=np.int64)
        lo, hi = int(offsets[0]), int(offsets[-1])
        messages = stored.values.slice(lo, hi - lo)
        at = np.where(ok, offsets[:-1] - lo, 0)
        role_ok = filled(pc.equal(pc.struct_field(messages, "role"), "assistant"), False, bool)
        # The compared contents put back on their rows (null elsewhere) line up with both responses,
        # which are then compared in place rather than copied.
        content = pc.struct_field(messages, "content").take(pa.array(at, mask=~ok))
        elem_bad = np.where(pick_a, differs(content, resp_a), differs(content, resp_b))
        bad |= ok & (elem_bad | ~role_ok[at])
    return bad


@dataclass(frozen=True)
class _Layout:
    """The derived table's Arrow schema and its pair columns, built once per audit: datasets'
    ``Features`` take milliseconds to turn into an Arrow schema, which adds up over batches."""

    schema: pa.Schema
    pair_columns: list[str]

    @classmethod
    def of(cls, rb: RuleBase) -> _Layout:
        return cls(derived_features(rb.schema).arrow_schema, list(pair_features(rb.schema)))


def audit_table(
    table: pa.Table,
    rb: RuleBase,
    *,
    counterfactual: bool = False,
    start: int = 0,
    max_report: int = 1000,
    messages: bool = True,
) -> RuleAuditReport:
    """Audit one table (a batch); ``start`` offsets the reported row indices.

    ``messages=False`` leaves ``chosen``/``rejected`` to another check (a config whose messages follow
    the verdict judge's label, not the rules').
    """
    return _audit_batch(
        table,
        rb,
        _Layout.of(rb),
        counterfactual=counterfactual,
        start=start,
        max_report=max_report,
        messages=messages,
    )


def _audit_batch(
    table: pa.Table,
    rb: RuleBase,
    layout: _Layout,
    *,
    counterfactual: bool,
    start: int,
    max_report: int = 1000,
    messages: bool,
) -> RuleAuditReport:
    missing = [c for c in layout.schema.names if c not in table.column_names]
    if missing:
        raise SplHfError(f"not a derived SPL table: missing columns {missing}")
    table = table.select(layout.schema.names)
    if table.schema != layout.schema:
        table = table.cast(layout.schema)
    n = table.num_rows
    stored = column_array(table, "derivation")
    sf = {f.name: pc.struct_field(stored, f.name) for f in stored.type}
    components = table.select(layout.pair_columns)
    margins = filled(sf["margin"], 1, np.int64)
    c = derive_codes(components, rb, np.maximum(margins, 1).astype(np.int32), strict=False)

    checks: dict[str, np.ndarray] = {}
    # Integrity: the digest over the stored components and stored derivation fields.
    digest = row_digests(components, {f: sf[f] for f in DIGEST_DERIVATION_FIELDS})
    checks["digest"] = differs(sf["digest"], digest)
    checks["margin"] = null_mask(sf["margin"]) | (margins < 1)
    checks["attribute_values"] = c.invalid
    report = RuleAuditReport(rows=n, rulebase_id=rb.id, rulebase_hash=rb.hash, counterfactual=counterfactual)

    label_checks = _label_checks(sf, c, rb)
    if counterfactual:
        _record_changes(report, table, components, sf, margins, label_checks, rb, start, max_report)
    else:
        checks.update(label_checks)
        checks.update(_derivation_checks(sf, c, rb))
        if messages:
            checks.update(_message_checks(table, c))

    record_mismatches(report, checks, table.column("pair_id"), start, max_report)
    return report


def _label_checks(sf: dict[str, pa.Array], c, rb: RuleBase) -> dict[str, np.ndarray]:
    """Stored verdicts, label and no-label reason against the recomputed ones."""
    names = rb.verdict_names
    stored_va, stored_vb = codes_of(sf["verdict_a"], names), codes_of(sf["verdict_b"], names)
    stored_label = codes_of(sf["label"], ("a", "b"))
    stored_reason = codes_of(sf["no_label_reason"], NO_LABEL_REASONS)
    return {
        "verdict_a": stored_va != np.where(c.verdict_a >= 0, c.verdict_a, -1),
        "verdict_b": stored_vb != np.where(c.verdict_b >= 0, c.verdict_b, -1),
        "label": stored_label != np.where(c.labeled, np.where(c.label_a, 0, 1), -1),
        "no_label_reason": stored_reason != c.reason,
    }


def _record_changes(
    report: RuleAuditReport,
    table: pa.Table,
    components: pa.Table,
    sf: dict[str, pa.Array],
    margins: np.ndarray,
    label_checks: dict[str, np.ndarray],
    rb: RuleBase,
    start: int,
    max_report: int,
) -> None:
    """Counterfactual: the labels ``rb`` would change, before and after (not mismatches)."""
    changed = np.logical_or.reduce(list(label_checks.values()))
    report.changed_labels = int(changed.sum())
    after = derive_table(components, rb, np.maximum(margins, 1).astype(np.int32), digest=False, strict=False)
    after_der = column_array(after, "derivation")
    ids = table.column("pair_id")
    for i in np.flatnonzero(changed)[:max_report]:
        k = int(i)
        report.changes.append(
            LabelChange(
                start + k,
                ids[k].as_py(),
                {f: sf[f][k].as_py() for f in LABEL_FIELDS},
                {f: pc.struct_field(after_der, f)[k].as_py() for f in LABEL_FIELDS},
            )
        )


def _derivation_checks(sf: dict[str, pa.Array], c, rb: RuleBase) -> dict[str, np.ndarray]:
    """Applied rules, ranks and the rule base named in each stored derivation."""
    checks = {
        "rules_a": _rules_differ(sf["rules_a"], c.applied_a, rb),
        "rules_b": _rules_differ(sf["rules_b"], c.applied_b, rb),
        "rank_a": int_differs(sf["rank_a"], c.rank_a, c.verdict_a >= 0),
        "rank_b": int_differs(sf["rank_b"], c.rank_b, c.verdict_b >= 0),
        "rank_diff": int_differs(sf["rank_diff"], c.diff, c.has_diff),
    }
    for f, want in (("rulebase_id", rb.id), ("rulebase_hash", rb.hash)):
        checks[f] = ~filled(pc.equal(sf[f], want), False, bool)
    return checks


def _message_checks(table: pa.Table, c) -> dict[str, np.ndarray]:
    """``chosen``/``rejected`` hold the responses the recomputed label picks."""
    resp_a, resp_b = column_array(table, "response_a"), column_array(table, "response_b")
    return {
        col: messages_differ(column_array(table, col), c.labeled, resp_a, resp_b, pick_a)
        for col, pick_a in (("chosen", c.label_a), ("rejected", ~c.label_a))
    }


def record_mismatches(
    report: RuleAuditReport, checks: dict[str, np.ndarray], ids: pa.ChunkedArray, start: int, max_report: int
) -> None:
    """Count the rows any check flags and list the first ``max_report`` with the fields that differ."""
    n = len(ids)
    bad = np.logical_or.reduce(list(checks.values())) if checks else np.zeros(n, dtype=bool)
    report.mismatch_count = int(bad.sum())
    report.reproduced = n - report.mismatch_count
    for i in np.flatnonzero(bad)[:max_report]:
        report.mismatches.append(
            Mismatch(start + int(i), ids[int(i)].as_py(), [f for f, m in checks.items() if m[i]])
        )


def merge_reports(reports: list[RuleAuditReport], max_report: int = 1000) -> RuleAuditReport:
    out = RuleAuditReport()
    for r in reports:
        out.rows += r.rows
        out.reproduced += r.reproduced
        out.mismatch_count += r.mismatch_count
        out.changed_labels += r.changed_labels
        out.mismatches.extend(r.mismatches)
        out.changes.extend(r.changes)
        out.rulebase_id, out.rulebase_hash, out.counterfactual = (
            r.rulebase_id,
            r.rulebase_hash,
            r.counterfactual,
        )
    out.mismatches = out.mismatches[:max_report]
    out.changes = out.changes[:max_report]
    return out


def audit_batches(
    table: pa.Table,
    rb: RuleBase,
    *,
    counterfactual: bool = False,
    batch_size: int = 65_536,
    workers: int | None = None,
    messages: bool = True,
) -> RuleAuditReport:
    """Audit a whole table in fixed-size slices, so memory stays bounded.

    Slices run on ``workers`` threads (default: the CPU count): numpy and Arrow release the GIL
    in their kernels, so batches overlap. The report is the same for any number of workers.
    """
    starts = range(0, table.num_rows, batch_size)
    workers = max(1, min(workers or os.cpu_count() or 1, len(starts) or 1))

    layout = _Layout.of(rb)

    def one(i: int) -> RuleAuditReport:
        return _audit_batch(
            table.slice(i, batch_size), rb, layout, counterfactual=counterfactual, start=i, messages=messages
        )

    if workers == 1:
        reports = [one(i) for i in starts]
    else:
        with ThreadPoolExecutor(workers) as pool:
            reports = list(pool.map(one, starts))
    if not reports:
        return RuleAuditReport(rulebase_id=rb.id, rulebase_hash=rb.hash, counterfactual=counterfactual)
    return merge_reports(reports)
