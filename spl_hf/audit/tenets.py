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
from spl_hf.backends.judge import scores_from_probs
from spl_hf.build.tenets import (
    CERTIFICATE_FILE,
    JUDGE_FIELDS,
    oriented_input_hashes,
    row_digests,
    score_index,
)

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


def check_rows(table: pa.Table, scores: pa.Table, cert: Certificate) -> dict[str, np.ndarray]:
    """Per-row checks of one config's table against the judge score table and the certificate."""
    der = table.column("derivation").combine_chunks()
    p1 = _field(der, "judge", "p_a_first").to_numpy(zero_copy_only=False)
    p2 = _field(der, "judge", "p_a_second").to_numpy(zero_copy_only=False)
    raw = scores_from_probs(p1, p2)
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
    settings = np.zeros(len(table), dtype=bool)
    for name, want in (("threshold", cert.threshold), ("capacity", cert.capacity), ("seed", cert.seed)):
        settings |= ~np.asarray(pc.equal(_field(der, name), want).fill_null(False), dtype=bool)
    checks["settings"] = settings
    # chosen/rejected must be the judged texts, on the side the score favours.
    implied = oriented_input_hashes(table.column("prompt"), table.column("chosen"), table.column("rejected"), side)
    checks["texts"] = ~np.asarray(pc.equal(_field(der, "judge", "input_sha256"), pa.array(implied, pa.string()))
                                  .fill_null(False), dtype=bool)
    # The stored probabilities must be the judged ones.
    index = score_index(scores)
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
    by_config: dict[str, list] = {}
    for s in splits:
        by_config.setdefault(s.config, []).append(s)
    if "judge_scores" not in by_config or "all" not in by_config:
        raise ValueError(f"{path}: a tenet build needs the 'all' and 'judge_scores' configs, found {sorted(by_config)}")
    scores = pa.concat_tables([s.table for s in by_config["judge_scores"]])
    cert = Certificate.from_dict(json.loads((Path(path) / CERTIFICATE_FILE).read_text()))
    report = TenetAuditReport()

    def flag(config: str, split: str, row: int, ident: str, fields: list[str]) -> None:
        report.mismatch_count += 1
        if len(report.mismatches) < max_report:
            report.mismatches.append({"config": config, "split": split, "row": row, "id": ident, "fields": fields})

    # Judge scores: every score is the difference of its stored probabilities.
    s_raw = scores_from_probs(scores.column("p_a_first").to_numpy(), scores.column("p_a_second").to_numpy())
    bad_scores = np.flatnonzero(s_raw != scores.column("score").to_numpy())
    for i in bad_scores:
        flag("judge_scores", "train", int(i), f"{scores['pair_id'][int(i)]}/{scores['tenet'][int(i)]}", ["score"])
    report.rows += scores.num_rows

    per_tenet_ids: list[str] = []
    for s in splits:
        if s.config == "judge_scores":
            continue
        checks = check_rows(s.table, scores, cert)
        if s.config != "all":
            checks["split"] = ~np.asarray(pc.equal(s.table.column("source"), s.split).fill_null(False), dtype=bool)
            checks["config"] = ~np.asarray(pc.equal(s.table.column("tenet"), s.config).fill_null(False), dtype=bool)
        bad = np.logical_or.reduce(list(checks.values()))
        report.rows += s.table.num_rows
        ids = s.table.column("scenario_id").to_pylist()
        for i in np.flatnonzero(bad):
            flag(s.config, s.split, int(i), ids[int(i)], [f for f, m in checks.items() if m[i]])
        if s.config != "all":
            per_tenet_ids.extend(ids)
    report.reproduced = report.rows - report.mismatch_count

    all_table = pa.concat_tables([s.table for s in by_config["all"]])
    all_ids = sorted(all_table.column("scenario_id").to_pylist())
    failures = []
    if sorted(per_tenet_ids) != all_ids:  # as multisets: no row missing, extra or repeated
        failures.append(
            f"per-tenet configs hold {len(per_tenet_ids)} rows ({len(set(per_tenet_ids))} distinct) but 'all' "
            f"holds {len(all_ids)}: the per-tenet configs must partition 'all'"
        )
    if len(bad_scores):
        failures.append(f"{len(bad_scores)} judge_scores rows have a score that is not p_a_first - p_a_second")
    der = all_table.column("derivation").combine_chunks()
    assignment = pa.table({
        "pair_id": _field(der, "pair_id"),
        "prompt_id": _field(der, "prompt_id"),
        "tenet": all_table.column("tenet"),
        "score": pa.array(scores_from_probs(_field(der, "judge", "p_a_first").to_numpy(zero_copy_only=False),
                                            _field(der, "judge", "p_a_second").to_numpy(zero_copy_only=False))),
    })
    check = verify_assignment(scores.select(["pair_id", "prompt_id", "tenet", "score"]), assignment, cert)
    report.certificate_failures = failures + list(check.failures)
    report.certificate_ok = check.ok and not failures
    return report
