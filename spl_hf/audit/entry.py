"""One audit: :func:`audit` reads a build (a folder, or a Hub repo at a pinned revision), tells a tenet
build from an SPL build, audits it, checks the manifest and the sources, and returns one
:class:`AuditReport`. The CLI, publishing, both releases and the demo all ask it, so the kind
dispatch and the report are written once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from spl_hf.audit.hub import audit_target
from spl_hf.audit.load import BuiltFolder, read_folder, resolve_rulebase, stored_rulebase_hashes
from spl_hf.errors import SplHfError
from spl_hf.manifest import MANIFEST, ManifestCheck
from spl_hf.rules import RuleBase

if TYPE_CHECKING:
    from spl_hf.audit.spl.folder import SPLAudit
    from spl_hf.audit.tenets.rows import TenetAuditReport

NO_SOURCES_NOTE = "no --sources: rows were not checked against their source pools (provenance)"
TENET_CONFIG_NOTE = "--config_name is ignored for a tenet build: its checks span every config"


@dataclass
class AuditReport:
    """What an audit found, in one shape for both kinds of build.

    ``details`` holds the kind's extra JSON keys (rule base, judge counts, counterfactual changes).
    :meth:`to_dict` is the one JSON shape: ``spl-hf audit --json`` prints it, and each release's
    ``audit.json`` is it (:meth:`write_json`). The kind's own report stays private (``_result``).
    """

    kind: str
    target: str
    ok: bool
    rows: int
    reproduced: int
    mismatch_count: int
    mismatches: list[dict] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    certificate_ok: bool | None = None  # tenet builds only
    manifest: ManifestCheck | None = None  # None when audited without the manifest
    provenance: dict | None = None  # None when no sources were given
    repo_id: str | None = None
    revision: str | None = None
    summary: list[str] = field(default_factory=list)  # the human-readable lines `spl-hf audit` prints
    details: dict[str, Any] = field(default_factory=dict)
    _result: SPLAudit | TenetAuditReport | None = field(default=None, repr=False, compare=False)
    _claim_failures: list[str] = field(default_factory=list, repr=False, compare=False)

    def to_dict(self) -> dict:
        """What ``spl-hf audit --json`` prints."""
        out: dict[str, Any] = {"kind": self.kind, "ok": self.ok, **self.details}
        out.update(
            rows=self.rows,
            reproduced=self.reproduced,
            mismatch_count=self.mismatch_count,
            mismatches=self.mismatches,
            failures=self.failures,
            notes=self.notes,
        )
        if self.certificate_ok is not None:
            out["certificate_ok"] = self.certificate_ok
        if self.provenance is not None:
            out["provenance"] = self.provenance
        if self.repo_id:
            out["repo_id"], out["revision"] = self.repo_id, self.revision
        if self.manifest is not None:
            out["manifest_mismatches"] = self.manifest.mismatched
            out["unlisted_files"] = self.manifest.unlisted
        return out

    def write_json(self, path: str | Path) -> Path:
        """Write :meth:`to_dict` as JSON to ``path`` (atomically): a release's ``audit.json``."""
        from spl_hf.files import write_json

        return write_json(path, self.to_dict())

    @property
    def judge_counts(self) -> dict[str, int]:
        """SPL builds with verdict-judge configs: ``judge_rows`` and ``judge_reproduced`` ({} otherwise)."""
        judge = self.details.get("judge")
        if not isinstance(judge, dict):
            return {}
        return {"judge_rows": judge["rows"], "judge_reproduced": judge["reproduced"]}

    @property
    def provenance_ok(self) -> bool:
        """Every row holds the text of the source record it names (True when no sources were given)."""
        prov = self.provenance
        return prov is None or (prov["differing"] == 0 and not prov["failures"])

    @property
    def checks_ok(self) -> bool:
        """The build's own checks (rows, certificate, files, manifest) passed, provenance aside."""
        return self._result is not None and self._result.ok and not self._claim_failures

    def describe_failure(self) -> str:
        """One line saying why the audit failed ("" when it passed)."""
        if self.ok:
            return ""
        if self.checks_ok:  # only the rows against their sources
            prov = self.provenance
            shown = "; ".join(
                f"{d['config']}/{d['split']} row {d['row']} ({d['pair_id']}): {', '.join(d['fields'])}"
                for d in prov["differences"][:3]
            )
            return (
                f"{prov['differing']} rows differ from --sources: {shown or '; '.join(prov['failures'][:3])}"
            )
        if self.manifest is not None and not self.manifest.ok:
            bad = self.manifest.mismatched + self.manifest.unlisted + self.manifest.problems
            return f"files differ from {MANIFEST}: {(bad or [MANIFEST + ' is missing'])[:5]}"
        if self._claim_failures and self._result is not None and self._result.ok:  # rows first
            return "claims the release makes differ from their recomputation: " + "; ".join(
                self._claim_failures[:3]
            )
        if self._result is None or self.details.get("data_failures"):
            return "the release's data is damaged: " + "; ".join(self.failures[:3])
        if self.kind == "spl":
            return self._result.describe_failure()
        cert = "; ".join(self.details.get("certificate_failures", [])[:3]) or "verified"
        return (
            "; ".join([*self.failures[:3], f"{self.mismatch_count} rows do not reproduce"])
            + f"; assignment certificate: {cert}"
        )


def audit(
    path_or_repo: str | Path,
    *,
    revision: str | None = None,
    rulebase: str | Path | RuleBase | None = None,
    sources: list[str] | None = None,
    manifest: bool = True,
    config: str | None = None,
    max_report: int = 1000,
) -> AuditReport:
    """Audit a build folder, or the Hub dataset ``path_or_repo`` at ``revision``.

    SPL builds are recomputed with ``rulebase`` (a file, a parsed rule base, or by default the
    build's own): one whose hash differs from the recorded one reports the labels it would change
    without failing. ``sources`` are provenance specs (see ``spl-hf audit --help``); ``config``
    restricts an SPL audit to one config. Raises FileNotFoundError/ValueError only when the target
    cannot be a build at all; everything else is a failure in the report.
    """
    if max_report < 0:
        raise SplHfError(f"--max_report must be >= 0, got {max_report}")
    with audit_target(str(path_or_repo), revision) as target:
        built = read_folder(target.folder, config=config, manifest=manifest, ignore=target.ignore)
        if built.kind == "tenets" and config:  # a tenet build's checks span every config
            built = read_folder(target.folder, manifest=manifest, ignore=target.ignore)
        report = _audit_checked(built, rulebase, sources, max_report, config, target.ignore)
    report.target = target.describe()
    report.repo_id, report.revision = target.repo_id, target.revision
    report.manifest = built.manifest
    return report


def _audit_checked(built: BuiltFolder, rulebase, sources, max_report: int, config, ignore) -> AuditReport:
    """The kind's row checks and the claim checks, each behind the damaged-data boundary of
    :mod:`spl_hf.audit.shape`: a table that lacks a column, holds another type or a null where the
    build writes none fails the audit naming file, row and field, never with a traceback."""
    from spl_hf.audit.shape import checked, shape_failures

    data = shape_failures(built)
    if built.kind == "tenets":
        run = lambda: _audit_tenets(built, sources, max_report, config)  # noqa: E731
    else:
        run = lambda: _audit_spl(built, rulebase, sources, max_report)  # noqa: E731
    report = checked("rows", built, data, run)
    if report is None:
        report = AuditReport(built.kind, "", False, 0, 0, 0, failures=list(built.failures))
    else:
        checked("claims", built, data, lambda: _check_claims(report, built, config, ignore))
    if data:
        report.failures[:0] = data
        report.details["data_failures"] = len(data)
        report.ok = False
    return report


def _check_claims(
    report: AuditReport, built: BuiltFolder, config: str | None, ignore: tuple[str, ...]
) -> None:
    """The release's files and what its card, reports and licence say, against their recomputation."""
    from spl_hf.audit.claims import check_claims

    if report.kind == "tenets":
        claims = report._result.claims if report._result is not None else None
    elif config is None:
        from spl_hf.audit.spl.claims import spl_claims

        claims = spl_claims(built, resolve_rulebase(built.path, None)[0])
    else:
        report.notes.append(f"--config_name {config}: the card, reports and licence were not recomputed")
        return
    if claims is None:
        report.notes.append("the certificate, 'all' rows or judge scores are unread: claims not recomputed")
        return
    report._claim_failures = check_claims(built, claims, ignore)
    report.failures += report._claim_failures
    report.ok = report.ok and not report._claim_failures


def _provenance(built: BuiltFolder, sources, max_report: int, own: RuleBase | None) -> dict | None:
    """Rows against their sources; an SPL build passes its own rule base (schema, verdict ranking)."""
    from spl_hf.audit.provenance import check_spl_provenance, check_tenet_provenance

    if own is None:
        return check_tenet_provenance(built, sources, max_report).to_dict()
    return check_spl_provenance(built, sources, own.schema, max_report, dict(own.verdicts)).to_dict()


def _audit_tenets(built: BuiltFolder, sources, max_report: int, config: str | None) -> AuditReport:
    from spl_hf.audit.tenets.rows import audit_folder

    result = audit_folder(built, max_report)
    report = AuditReport(
        kind="tenets",
        target="",
        ok=result.ok,
        rows=result.rows,
        reproduced=result.reproduced,
        mismatch_count=result.mismatch_count,
        mismatches=list(result.mismatches),
        failures=list(result.failures),
        notes=list(result.notes) + ([TENET_CONFIG_NOTE] if config else []),
        certificate_ok=result.certificate_ok,
        details={"certificate_failures": list(result.certificate_failures)},
        _result=result,
    )
    _add_provenance(report, built, sources, max_report, None)
    report.summary = [
        f"{result.rows} rows, {result.reproduced} reproduced, {result.mismatch_count} mismatches; "
        f"assignment certificate {'verified' if result.certificate_ok else 'FAILED'}",
        *(f"  certificate: {failure}" for failure in result.certificate_failures[:20]),
    ]
    return report


def _add_provenance(report: AuditReport, built, sources, max_report: int, own: RuleBase | None) -> None:
    if not sources:
        report.notes.append(NO_SOURCES_NOTE)
        return
    report.provenance = _provenance(built, sources, max_report, own)
    report.ok = report.ok and report.provenance_ok


def _rulebases(built: BuiltFolder, rulebase) -> tuple[RuleBase, str, RuleBase]:
    """The rule base to recompute with, where it came from, and the build's own (the judge's ranking)."""
    own, own_source = resolve_rulebase(built.path, None)
    if rulebase is None:
        return own, own_source, own
    if isinstance(rulebase, RuleBase):
        return rulebase, "given", own
    rb, source = resolve_rulebase(built.path, str(rulebase))
    return rb, source, own


def _audit_spl(built: BuiltFolder, rulebase, sources, max_report: int) -> AuditReport:
    from spl_hf.audit.spl.folder import audit_spl_folder

    rb, rb_source, own = _rulebases(built, rulebase)
    stored = stored_rulebase_hashes(built.splits)
    counterfactual = rulebase is not None and stored != {rb.hash} and bool(stored)
    result = audit_spl_folder(built, rb, judge_rb=own, counterfactual=counterfactual, max_report=max_report)
    result.failures[:0] = built.failures
    rules, judge = result.rules, result.judge
    report = AuditReport(
        kind="spl",
        target="",
        ok=result.ok,
        rows=rules.rows,
        reproduced=rules.reproduced,
        mismatch_count=rules.mismatch_count + (judge.mismatch_count if judge else 0),
        mismatches=[
            {"config": s.config, "split": s.split, "row": m.index, "pair_id": m.pair_id, "fields": m.fields}
            for s, r in result.reports + result.judge_reports
            for m in r.mismatches
        ][:max_report],
        failures=result.failures,
        notes=list(built.notes) + result.notes,
        details=_spl_details(result, counterfactual, stored, rb_source, max_report),
        _result=result,
    )
    _add_provenance(report, built, sources, max_report, own)
    report.summary = [
        f"{rules.rows} rows, {rules.reproduced} reproduced, {rules.mismatch_count} mismatches "
        f"(rule base {rb.id} {rb.hash[:12]} from {rb_source})"
    ]
    if judge is not None:
        report.summary.append(
            f"verdict judge: {judge.rows} rows, {judge.reproduced} reproduced, {judge.mismatch_count} mismatches"
        )
    if counterfactual:
        report.summary.append(f"counterfactual: {rules.changed_labels} labels would change")
    return report


def _spl_details(result, counterfactual: bool, stored: set[str], rb_source: str, max_report: int) -> dict:
    """The SPL keys of ``spl-hf audit --json`` beyond the common ones."""
    out = result.rules.to_dict()
    for common in ("rows", "reproduced", "mismatch_count", "mismatches"):
        out.pop(common)
    if result.judge is not None:
        out["judge"] = {
            "rows": result.judge.rows,
            "reproduced": result.judge.reproduced,
            "mismatch_count": result.judge.mismatch_count,
        }
    if counterfactual:
        out["changes"] = [
            {
                "config": s.config,
                "split": s.split,
                "row": c.index,
                "pair_id": c.pair_id,
                "before": c.before,
                "after": c.after,
            }
            for s, r in result.reports
            for c in r.changes
        ][:max_report]
        out["recorded_rulebase_hashes"] = sorted(stored)
    out["rulebase_source"] = rb_source
    out["splits"] = result.per_split()
    return out
