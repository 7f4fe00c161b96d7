"""Audit of a per-tenet DPO build: scores, orientation, eligibility, digests and the assignment.

Everything is recomputed from what the build stored: each row's score from its two per-ordering
judge probabilities, the chosen side from the score's sign, eligibility from the threshold, the
digest from the row, and optimality of the whole split from the ``judge_scores`` config and
``assignment_certificate.json`` (no model, no solver).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from spl_hf.assign import verify_assignment
from spl_hf.assign.certificate import Certificate
from spl_hf.audit.load import load_built
from spl_hf.build.tenets import CERTIFICATE_FILE, JUDGE_FIELDS, row_digests

TOLERANCE = 1e-12


@dataclass
class TenetAuditReport:
    rows: int = 0
    reproduced: int = 0
    mismatch_count: int = 0
    mismatches: list[dict] = field(default_factory=list)
    certificate_ok: bool = False
    certificate_failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.mismatch_count == 0 and self.certificate_ok

    def to_dict(self) -> dict:
        return asdict(self)


def is_tenet_build(path: str | Path) -> bool:
    return (Path(path) / CERTIFICATE_FILE).is_file()


def _field(der: pa.Array, *names: str) -> pa.Array:
    for name in names:
        der = pc.struct_field(der, name)
    return der


def check_rows(table: pa.Table, scores: pa.Table) -> dict[str, np.ndarray]:
    """Per-row checks of one config's table against the judge score table."""
    der = table.column("derivation").combine_chunks()
    p1 = _field(der, "judge", "p_a_first").to_numpy(zero_copy_only=False)
    p2 = _field(der, "judge", "p_a_second").to_numpy(zero_copy_only=False)
    raw = p1 - p2
    score = table.column("score").to_numpy()
    side = _field(der, "chosen_side").to_pylist()
    threshold = _field(der, "threshold").to_numpy(zero_copy_only=False)
    checks = {
        "score": ~(np.abs(np.abs(raw) - score) <= TOLERANCE),
        "chosen_side": np.array([s != ("a" if r > 0 else "b") for s, r in zip(side, raw)], dtype=bool),
        "threshold": ~(score >= threshold),
        "digest": np.asarray(
            pc.invert(pc.equal(_field(der, "digest"), row_digests(table)).fill_null(False)), dtype=bool
        ),
    }
    expected_scenario = pc.binary_join_element_wise(
        table.column("tenet"), table.column("source"), pc.cast(_field(der, "row_id"), pa.string()), "_"
    )
    checks["scenario_id"] = ~np.asarray(pc.equal(table.column("scenario_id"), expected_scenario).fill_null(False))
    # The stored probabilities must be the judged ones.
    index = {(p, t): i for i, (p, t) in enumerate(zip(scores.column("pair_id").to_pylist(), scores.column("tenet").to_pylist()))}
    keys = list(zip(_field(der, "pair_id").to_pylist(), table.column("tenet").to_pylist()))
    found = np.array([k in index for k in keys], dtype=bool)
    rows = pa.array([index.get(k, 0) for k in keys])
    judged = ~found
    for name in JUDGE_FIELDS:
        stored = _field(der, "judge", name)
        expected = scores.column(name).take(rows)
        judged |= ~np.asarray(pc.equal(stored, expected).fill_null(False), dtype=bool)
    checks["judge"] = judged
    return checks


def audit_tenet_build(path: str, max_report: int = 1000) -> TenetAuditReport:
    splits = load_built(path)
    scores = next(s.table for s in splits if s.config == "judge_scores")
    report = TenetAuditReport()
    assignment = None
    for s in splits:
        if s.config == "judge_scores":
            continue
        checks = check_rows(s.table, scores)
        bad = np.logical_or.reduce(list(checks.values()))
        report.rows += s.table.num_rows
        report.mismatch_count += int(bad.sum())
        ids = s.table.column("scenario_id")
        for i in np.flatnonzero(bad):
            if len(report.mismatches) < max_report:
                report.mismatches.append(
                    {"config": s.config, "split": s.split, "row": int(i), "scenario_id": ids[int(i)].as_py(),
                     "fields": [f for f, m in checks.items() if m[i]]}
                )
        if s.config == "all":
            der = s.table.column("derivation").combine_chunks()
            raw = _field(der, "judge", "p_a_first").to_numpy(zero_copy_only=False) - _field(
                der, "judge", "p_a_second").to_numpy(zero_copy_only=False)
            assignment = pa.table({
                "pair_id": _field(der, "pair_id"),
                "prompt_id": _field(der, "prompt_id"),
                "tenet": s.table.column("tenet"),
                "score": pa.array(raw),
            })
    report.reproduced = report.rows - report.mismatch_count
    cert = Certificate.from_dict(json.loads((Path(path) / CERTIFICATE_FILE).read_text()))
    if assignment is None:
        report.certificate_failures = ["no 'all' config to verify the assignment against"]
    else:
        check = verify_assignment(scores.select(["pair_id", "prompt_id", "tenet", "score"]), assignment, cert)
        report.certificate_ok = check.ok
        report.certificate_failures = list(check.failures)
    return report
