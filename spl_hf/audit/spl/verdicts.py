"""Audit of the verdict-judge derivation of SPL pairs: recomputed from the stored probabilities alone.

Each response's verdict is the most probable of the stored options, the ranks come from the rule
base's ranking, the label and no-label reason from the ranks; the option list, the rule-base hash
and the digest are checked, and, where a config's messages follow the judge, ``chosen``/``rejected``.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from spl_hf.audit.spl.labels import (
    RuleAuditReport,
    codes_of,
    differs,
    int_differs,
    messages_differ,
    null_mask,
    record_mismatches,
)
from spl_hf.derive import (
    JUDGE_COLUMN,
    JUDGE_NO_LABEL_REASONS,
    column_array,
    filled,
    judge_codes,
    judge_digests,
    judge_features,
    verdict_options,
)
from spl_hf.errors import SplHfError
from spl_hf.rules import RuleBase


def audit_judge_table(
    table: pa.Table, rb: RuleBase, *, messages: bool = True, start: int = 0, max_report: int = 1000
) -> RuleAuditReport:
    """Recompute every row's ``judge`` struct (and, with ``messages``, its judge-label messages)."""
    schema = judge_features(rb.schema).arrow_schema
    missing = [c for c in schema.names if c not in table.column_names]
    if missing:
        raise SplHfError(f"not a verdict-judge table: missing columns {missing}")
    try:
        table = table.select(schema.names).cast(schema)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
        raise SplHfError(f"not a verdict-judge table: its columns have other types ({exc})") from None
    n = table.num_rows
    judge = column_array(table, JUDGE_COLUMN)
    jf = {f.name: pc.struct_field(judge, f.name) for f in judge.type}
    ranking = dict(rb.verdicts)
    options = verdict_options(ranking)
    c = judge_codes(jf["probs_a"], jf["probs_b"], ranking)
    checks: dict[str, np.ndarray] = {}
    checks["options"] = differs(jf["options"], pa.array([list(options)] * n, pa.list_(pa.string())))
    for side, v, r in (("a", c.verdict_a, c.rank_a), ("b", c.verdict_b, c.rank_b)):
        ok_status = filled(pc.equal(jf[f"status_{side}"], "ok"), False, bool)
        # A judged response has probabilities over every option; one that was not judged has none.
        checks[f"probs_{side}"] = (v == -2) | (ok_status != (v >= 0)) | null_mask(jf[f"status_{side}"])
        checks[f"verdict_{side}"] = codes_of(jf[f"verdict_{side}"], options) != np.where(v >= 0, v, -1)
        checks[f"rank_{side}"] = int_differs(jf[f"rank_{side}"], r, v >= 0)
    checks["label"] = codes_of(jf["label"], ("a", "b")) != np.where(c.labeled, np.where(c.label_a, 0, 1), -1)
    checks["no_label_reason"] = codes_of(jf["no_label_reason"], JUDGE_NO_LABEL_REASONS) != c.reason
    checks["rulebase_hash"] = ~filled(pc.equal(jf["rulebase_hash"], rb.hash), False, bool)
    checks["judge_digest"] = differs(jf["digest"], judge_digests(table, jf))
    if messages:
        resp_a, resp_b = column_array(table, "response_a"), column_array(table, "response_b")
        for col, pick_a in (("chosen", c.label_a), ("rejected", ~c.label_a)):
            checks[col] = messages_differ(column_array(table, col), c.labeled, resp_a, resp_b, pick_a)
    # Judge fields are named as such; the messages keep their column names.
    named = {f if f in ("chosen", "rejected") else f"judge.{f}": m for f, m in checks.items()}
    report = RuleAuditReport(rows=n, rulebase_id=rb.id, rulebase_hash=rb.hash)
    record_mismatches(report, named, table.column("pair_id"), start, max_report)
    return report
