"""Audit of a whole SPL build: every config's rows recomputed, and the configs checked against each other.

Row checks: configs with a rule derivation (``preferences``, ``derivations``, ``common_support``,
``common_support_judge``) are recomputed with the rule base; configs with a verdict-judge derivation
(``judge_derivations`` and both common-support configs) from their stored probabilities. Each
config's messages are checked against the label they follow.

Set checks (the rows are right, but are they the right rows?): ``preferences`` holds exactly the
labeled pairs of ``derivations``; ``judge_derivations`` holds every pair of ``derivations`` with the
same content; both common-support configs hold exactly the pairs labeled under both, with the
derivations of the configs they come from. Row digests are verified per row first, so equal digests
mean equal content.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from spl_hf.audit.load import BUILD_REPORT, BuiltFolder, LoadedSplit, read_build_report
from spl_hf.audit.spl.evidence import check_spl_evidence
from spl_hf.audit.spl.labels import RuleAuditReport, audit_batches, merge_reports
from spl_hf.audit.spl.verdicts import audit_judge_table
from spl_hf.contract import combine, hash_array
from spl_hf.derive import DIGEST_COLUMNS, JUDGE_COLUMN
from spl_hf.rules import RuleBase

JUDGE_CONFIGS = ("judge_derivations", "common_support", "common_support_judge")
# Configs whose chosen/rejected follow the judge's label rather than the rules'.
JUDGE_MESSAGES = ("judge_derivations", "common_support_judge")
RULE_FREE = ("judge_derivations",)  # no rule derivation column to recompute
__all__ = ["SPLAudit", "audit_spl_folder"]


@dataclass
class SPLAudit:
    """The rule audit (its report is what `spl-hf audit` always printed), the judge audit and the set checks."""

    rules: RuleAuditReport
    judge: RuleAuditReport | None
    reports: list[tuple[LoadedSplit, RuleAuditReport]] = field(default_factory=list)
    judge_reports: list[tuple[LoadedSplit, RuleAuditReport]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.rules.ok and (self.judge is None or self.judge.ok) and not self.failures

    def describe_failure(self) -> str:
        """One line saying why the audit failed ("" when it passed)."""
        parts = list(self.failures[:3])
        for what, report in (("rows", self.rules), ("verdict-judge rows", self.judge)):
            if report is not None and report.mismatch_count:
                first = report.mismatches[0] if report.mismatches else None
                where = f" (first: {first.pair_id}, fields {first.fields})" if first else ""
                parts.append(f"{report.mismatch_count} of {report.rows} {what} do not reproduce{where}")
        return "; ".join(parts)

    def per_split(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for key, reports in (("", self.reports), ("judge_", self.judge_reports)):
            for s, r in reports:
                out.setdefault(f"{s.config}/{s.split}", {})[f"{key}rows"] = r.rows
                out[f"{s.config}/{s.split}"][f"{key}reproduced"] = r.reproduced
        return out


def audit_spl_folder(
    built: BuiltFolder,
    rb: RuleBase,
    *,
    judge_rb: RuleBase | None = None,
    counterfactual: bool = False,
    max_report: int = 1000,
) -> SPLAudit:
    """Audit what :func:`spl_hf.audit.load.read_folder` read of an SPL build.

    ``judge_rb`` is the ranking the judge labels were made with (default ``rb``): a counterfactual
    rule base changes the rules' labels, not the recorded judge comparison.
    """
    judge_rb = judge_rb or rb
    out = SPLAudit(
        rules=RuleAuditReport(rulebase_id=rb.id, rulebase_hash=rb.hash, counterfactual=counterfactual),
        judge=None,
    )
    for s in built.splits:
        if s.config not in RULE_FREE:
            try:
                r = audit_batches(
                    s.table, rb, counterfactual=counterfactual, messages=s.config not in JUDGE_MESSAGES
                )
            except ValueError as exc:  # a file whose columns are not a derived table
                out.failures.append(f"{s.config}/{s.split}: {exc}")
            else:
                out.reports.append((s, r))
        if s.config in JUDGE_CONFIGS:
            try:
                jr = audit_judge_table(
                    s.table, judge_rb, messages=s.config in JUDGE_MESSAGES, max_report=max_report
                )
            except ValueError as exc:
                out.failures.append(f"{s.config}/{s.split}: {exc}")
            else:
                out.judge_reports.append((s, jr))
    if out.reports:
        out.rules = merge_reports([r for _, r in out.reports], max_report)
    if out.judge_reports:
        out.judge = merge_reports([r for _, r in out.judge_reports], max_report)
    configs = {s.config for s in built.splits}
    if "derivations" not in configs:
        out.notes.append(
            "derivations was not read (--config): the configs were not checked against each other"
        )
        return out
    out.failures += _expected_configs(built)
    out.failures += set_checks(built)
    der = _concat(built, "derivations")
    if der is not None and "attribute_status" in der.column_names:
        jd = _concat(built, "judge_derivations")
        judged = jd if jd is not None and JUDGE_COLUMN in jd.column_names else None
        out.failures += check_spl_evidence(Path(built.path), der, judged, built.splits)
    return out


def _expected_configs(built: BuiltFolder) -> list[str]:
    """Judge configs the build report records but the card lacks (a whole config removed)."""
    judge = read_build_report(built.path).get("judge")
    if not isinstance(judge, dict):
        return []
    want = ["judge_derivations"]
    tables = judge.get("tables")
    if (
        isinstance(tables, dict)
        and isinstance(tables.get("common_support"), int)
        and tables["common_support"] > 0
    ):
        want += ["common_support", "common_support_judge"]
    return [
        f"{name}: {BUILD_REPORT} records verdict-judge labels, but the card declares no {name} config"
        for name in want
        if name not in built.card.configs
    ]


def _concat(built: BuiltFolder, config: str) -> pa.Table | None:
    tables = [s.table for s in built.splits if s.config == config]
    if not tables:
        return None
    try:
        return pa.concat_tables(tables, promote_options="default")
    except pa.ArrowInvalid:
        return None  # reported by the row checks


def _keyed(table: pa.Table, key: pa.Array, config: str, failures: list[str]) -> dict[str, str | None]:
    ids = table.column("pair_id").to_pylist()
    out: dict[str, str | None] = {}
    for pid, k in zip(ids, key.to_pylist(), strict=True):
        if pid in out:
            failures.append(f"{config}: pair {pid!r} appears more than once")
        out[pid] = k
    return out


def _compare(
    config: str, got: dict[str, str | None], want: dict[str, str | None], rule: str, source: str
) -> list[str]:
    out = []
    missing = [p for p in want if p not in got]
    extra = [p for p in got if p not in want]
    differ = [p for p in want if p in got and got[p] != want[p]]
    if missing:
        out.append(
            f"{config}: {len(missing)} pair(s) of {rule} are missing (first: {', '.join(missing[:5])})"
        )
    if extra:
        out.append(f"{config}: {len(extra)} pair(s) that are not {rule} (first: {', '.join(extra[:5])})")
    if differ:
        out.append(
            f"{config}: {len(differ)} pair(s) differ from the same pairs in {source} "
            f"(first: {', '.join(differ[:5])})"
        )
    return out


def _field(table: pa.Table, column: str, name: str) -> pa.Array:
    return pc.struct_field(table.column(column).combine_chunks(), name)


def _content(table: pa.Table) -> pa.Array:
    """A hash of the pair's own columns (text, attributes), the part every config of a pair shares."""
    return combine([hash_array(table.column(c)) for c in DIGEST_COLUMNS])


def set_checks(built: BuiltFolder) -> list[str]:
    """Whether each config holds exactly the pairs it should, as they are in the config they come from."""
    failures: list[str] = []
    der = _concat(built, "derivations")
    if der is None or "derivation" not in der.column_names:
        return failures
    try:
        der_digest = _field(der, "derivation", "digest")
        labeled = pc.is_valid(_field(der, "derivation", "label"))
    except (KeyError, pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return failures  # a malformed derivations table: the row checks report it
    _keyed(der, der_digest, "derivations", failures)  # reports a pair stored twice
    spl_labeled = _keyed(der.filter(labeled), der_digest.filter(labeled), "derivations", [])
    pref = _concat(built, "preferences")
    if pref is not None:
        failures += _compare(
            "preferences",
            _keyed(pref, _field(pref, "derivation", "digest"), "preferences", failures),
            spl_labeled,
            "the labeled pairs of derivations",
            "derivations",
        )
    elif spl_labeled and "preferences" not in built.card.configs:
        failures.append(
            f"preferences: derivations has {len(spl_labeled)} labeled pair(s) but the card declares "
            "no preferences config"
        )
    jd = _concat(built, "judge_derivations")
    if jd is None:
        for name in ("common_support", "common_support_judge"):
            if name in built.card.configs:
                failures.append(f"{name}: the build has no judge_derivations config to check it against")
        return failures
    try:
        judge_digest = _field(jd, JUDGE_COLUMN, "digest")
        judge_labeled = pc.is_valid(_field(jd, JUDGE_COLUMN, "label"))
    except (KeyError, pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return failures
    content = {
        p: k for p, k in zip(der.column("pair_id").to_pylist(), _content(der).to_pylist(), strict=True)
    }
    failures += _compare(
        "judge_derivations",
        _keyed(jd, _content(jd), "judge_derivations", failures),
        content,
        "every pair of derivations",
        "derivations",
    )
    judged = {p: d for p, d in zip(jd.column("pair_id").to_pylist(), judge_digest.to_pylist(), strict=True)}
    judge_ok = set(jd.filter(judge_labeled).column("pair_id").to_pylist())
    want = {p: f"{d}/{judged.get(p)}" for p, d in spl_labeled.items() if p in judge_ok}
    for name in ("common_support", "common_support_judge"):
        table = _concat(built, name)
        if table is None:
            if want:
                failures.append(
                    f"{name}: {len(want)} pair(s) are labeled under both, but the card declares no "
                    f"{name} config"
                )
            continue
        try:
            key = pc.binary_join_element_wise(
                _field(table, "derivation", "digest"), _field(table, JUDGE_COLUMN, "digest"), "/"
            )
        except (KeyError, pa.ArrowInvalid, pa.ArrowNotImplementedError):
            continue
        failures += _compare(
            name,
            _keyed(table, key, name, failures),
            want,
            "the pairs labeled by both the rules and the judge",
            "derivations and judge_derivations",
        )
    return failures


def audit_spl_path(path: str | Path, rb: RuleBase | None = None) -> SPLAudit:
    """Read and audit an SPL build folder on disk (manifest included), with its own rule base by default."""
    from spl_hf.audit.load import read_folder, resolve_rulebase

    built = read_folder(path)
    own, _ = resolve_rulebase(path, None)
    result = audit_spl_folder(built, rb or own, judge_rb=own)
    result.failures[:0] = built.failures
    return result
