"""One explanation: open the release, find the row, derive its story, and ask the audit about it."""

from __future__ import annotations

from collections.abc import Sequence

from spl_hf.explain.locate import RowRef, find_row
from spl_hf.explain.release import Release, open_release


def explain(
    path_or_repo: str, row: Sequence[str], *, revision: str | None = None, clip: int = 400, audit: bool = True
) -> dict:
    """The derivation of one row of a release (a folder, or a Hub dataset at ``revision``)."""
    with open_release(path_or_repo, revision) as release:
        ref = find_row(release, row)
        out = explain_ref(release, ref, clip)
        if audit:
            out["audit"] = audit_verdict(release, out)
        return out


def explain_ref(release: Release, ref: RowRef, clip: int) -> dict:
    if release.kind == "tenets":
        from spl_hf.explain.tenet import explain_tenet

        return explain_tenet(release, ref, clip)
    from spl_hf.explain.spl import explain_spl

    return explain_spl(release, ref, clip)


def audit_verdict(release: Release, explained: dict, report=None) -> dict:
    """The audit's verdict on the release and on this row (every place the row is stored).

    ``report`` is an :class:`~spl_hf.audit.AuditReport` already computed for this release (the viewer
    audits once); by default the release is audited here.
    """
    if report is None:
        from spl_hf.audit import audit

        report = audit(release.target, revision=release.revision if release.repo_id else None)
    ids = {explained.get("scenario_id"), explained["pair_id"]} - {None}
    mine = [m for m in report.mismatches if m.get("id") in ids or m.get("pair_id") in ids]
    listed_all = len(report.mismatches) >= report.mismatch_count
    return {
        "release_ok": report.ok,
        "rows": report.rows,
        "reproduced": report.reproduced,
        "mismatch_count": report.mismatch_count,
        "certificate_ok": report.certificate_ok,
        "row_mismatches": mine,
        # A row absent from a truncated mismatch list may still be among the unlisted ones.
        "row_reproduced": (not mine) if listed_all else (False if mine else None),
        "failures": list(report.failures[:5]),
    }
