"""Audit: recompute every label of a built SPL dataset from its recorded derivation alone.

No model is involved: verdicts, ranks, labels and the DPO messages are recomputed from the
stored attribute assignments with the rule base, and the row digest is recomputed from the
stored fields. With a different rule base the audit becomes a counterfactual diff: which
labels would change.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from spl_hf.derive.derivation import derive_table, encode_attributes, row_digests
from spl_hf.derive.digest import hash_array
from spl_hf.derive.features import DIGEST_DERIVATION_FIELDS, derived_features, pair_features
from spl_hf.rules.rulebase import RuleBase

CHECKED_FIELDS = (
    "rules_a",
    "rules_b",
    "verdict_a",
    "verdict_b",
    "rank_a",
    "rank_b",
    "rank_diff",
    "label",
    "no_label_reason",
    "rulebase_id",
    "rulebase_hash",
)
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
class AuditReport:
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


def _null_mask(a: pa.Array) -> np.ndarray:
    return np.asarray(a.is_null().to_numpy(zero_copy_only=False), dtype=bool)


def _list_lengths(a: pa.Array) -> np.ndarray:
    return np.asarray(pc.list_value_length(a).fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64)


def differs(a: pa.Array, b: pa.Array) -> np.ndarray:
    """Per-row inequality of two arrays of the same type, treating null == null."""
    if pa.types.is_list(a.type):
        if pa.types.is_string(a.type.value_type):
            return differs(pc.binary_join(a, "\x1f"), pc.binary_join(b, "\x1f"))
        la, lb = _list_lengths(a), _list_lengths(b)
        if not np.array_equal(la, lb):
            return (hash_array(a) != hash_array(b)).any(axis=1)
        # Same shape everywhere: compare the flattened elements directly (no hashing).
        fa, fb = pc.list_flatten(a), pc.list_flatten(b)
        elem = differs(fa, fb)
        parents = pc.list_parent_indices(a).to_numpy(zero_copy_only=False)
        return np.bincount(parents, weights=elem, minlength=len(a)) > 0
    if pa.types.is_struct(a.type):
        out = _null_mask(a) != _null_mask(b)
        for k in range(a.type.num_fields):
            out |= differs(pc.struct_field(a, k), pc.struct_field(b, k))
        return out
    eq = pc.equal(a, b)
    same = np.asarray(eq.fill_null(False).to_numpy(zero_copy_only=False), dtype=bool)
    return ~(same | (_null_mask(a) & _null_mask(b)))


def audit_table(
    table: pa.Table, rb: RuleBase, *, counterfactual: bool = False, start: int = 0, max_report: int = 1000
) -> AuditReport:
    """Audit one table (a batch); ``start`` offsets the reported row indices."""
    feats = derived_features(rb.schema)
    missing = [c for c in feats if c not in table.column_names]
    if missing:
        raise ValueError(f"not a derived SPL table: missing columns {missing}")
    table = table.select(list(feats)).cast(feats.arrow_schema)
    n = table.num_rows
    stored = table.column("derivation").combine_chunks()
    stored_fields = {f.name: pc.struct_field(stored, f.name) for f in stored.type}
    components = table.select(list(pair_features(rb.schema)))
    margins = stored_fields["margin"].fill_null(1).to_numpy(zero_copy_only=False)
    redo = derive_table(components, rb, np.maximum(margins, 1), digest=False, strict=False)
    redo_der = redo.column("derivation").combine_chunks()
    redo_fields = {f.name: pc.struct_field(redo_der, f.name) for f in redo_der.type}

    checks: dict[str, np.ndarray] = {}
    # Integrity: the digest over the stored components and stored derivation fields.
    digest = row_digests(components, {f: stored_fields[f] for f in DIGEST_DERIVATION_FIELDS})
    checks["digest"] = differs(stored_fields["digest"], digest)
    checks["margin"] = _null_mask(stored_fields["margin"]) | (margins < 1)
    checks["attribute_values"] = np.zeros(n, dtype=bool)
    for col, scope in (("prompt_attributes", "prompt"), ("response_a_attributes", "response"),
                       ("response_b_attributes", "response")):
        checks["attribute_values"] |= encode_attributes(components, col, rb, scope, strict=False).invalid
    report = AuditReport(rows=n, rulebase_id=rb.id, rulebase_hash=rb.hash, counterfactual=counterfactual)
    if counterfactual:
        changed = np.zeros(n, dtype=bool)
        for f in LABEL_FIELDS:
            changed |= differs(stored_fields[f], redo_fields[f])
        report.changed_labels = int(changed.sum())
        ids = table.column("pair_id")
        for i in np.flatnonzero(changed)[:max_report]:
            report.changes.append(
                LabelChange(
                    start + int(i),
                    ids[int(i)].as_py(),
                    {f: stored_fields[f][int(i)].as_py() for f in LABEL_FIELDS},
                    {f: redo_fields[f][int(i)].as_py() for f in LABEL_FIELDS},
                )
            )
    else:
        for f in CHECKED_FIELDS:
            checks[f] = differs(stored_fields[f], redo_fields[f])
        for col in ("chosen", "rejected"):
            checks[col] = differs(table.column(col).combine_chunks(), redo.column(col).combine_chunks())

    bad = np.zeros(n, dtype=bool)
    for mask in checks.values():
        bad |= mask
    report.mismatch_count = int(bad.sum())
    report.reproduced = n - report.mismatch_count
    if report.mismatch_count:
        ids = table.column("pair_id")
        for i in np.flatnonzero(bad)[:max_report]:
            report.mismatches.append(
                Mismatch(start + int(i), ids[int(i)].as_py(), [f for f, m in checks.items() if m[i]])
            )
    return report


def merge_reports(reports: list[AuditReport], max_report: int = 1000) -> AuditReport:
    out = AuditReport()
    for r in reports:
        out.rows += r.rows
        out.reproduced += r.reproduced
        out.mismatch_count += r.mismatch_count
        out.changed_labels += r.changed_labels
        out.mismatches.extend(r.mismatches)
        out.changes.extend(r.changes)
        out.rulebase_id, out.rulebase_hash, out.counterfactual = r.rulebase_id, r.rulebase_hash, r.counterfactual
    out.mismatches = out.mismatches[:max_report]
    out.changes = out.changes[:max_report]
    return out


def audit_batches(
    table: pa.Table, rb: RuleBase, *, counterfactual: bool = False, batch_size: int = 65_536
) -> AuditReport:
    """Audit a whole table in fixed-size slices, so memory stays bounded."""
    reports = [
        audit_table(table.slice(i, batch_size), rb, counterfactual=counterfactual, start=i)
        for i in range(0, table.num_rows, batch_size)
    ]
    if not reports:
        return AuditReport(rulebase_id=rb.id, rulebase_hash=rb.hash, counterfactual=counterfactual)
    return merge_reports(reports)
