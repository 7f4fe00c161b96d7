"""`spl-hf audit`: recompute every row of a built dataset from the files on disk (or at a Hub revision)."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spl_hf.audit.config import AuditArgs


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str) -> None:
    from spl_hf.audit.config import AuditArgs
    from spl_hf.configs import JsonArgs, RevisionArgs, add_config_parser

    p = add_config_parser(
        sub,
        name,
        (AuditArgs, RevisionArgs, JsonArgs),
        help=help_text,
        description="Read the build's files exactly as they are on disk (or a Hub dataset at --revision) and "
        "recompute every row from its stored components (no model): SPL builds' verdicts, labels and "
        "digests; tenet builds' scores, orientation, eligibility, digests and assignment certificate. Every "
        "config and split the card declares must be present with its declared row count, every data file "
        "declared, and every file listed in MANIFEST.sha256 with its bytes. With --sources, every row must "
        "also hold byte for byte the text of the source row it names. Exits 0 only when all of this holds. "
        "With a --rulebase whose hash differs from the one recorded, reports which labels would change "
        "(counterfactual) without failing.",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from spl_hf.audit.hub import audit_target
    from spl_hf.audit.load import read_folder
    from spl_hf.configs import configs_from_args

    a, rev, js = configs_from_args(args)
    with audit_target(a.path, rev.revision) as target:
        built = read_folder(target.folder, config=a.config_name, manifest=a.manifest, ignore=target.ignore)
        if built.kind == "tenets" and a.config_name:  # a tenet build's checks span every config
            built = read_folder(target.folder, manifest=a.manifest, ignore=target.ignore)
        out, ok = run_tenets(a, js.json, built) if built.kind == "tenets" else run_spl(a, js.json, built)
        if target.repo_id:
            out["repo_id"], out["revision"] = target.repo_id, target.revision
    if built.manifest is not None:
        out["manifest_mismatches"] = built.manifest.mismatched
        out["unlisted_files"] = built.manifest.unlisted
    if js.json:
        print(json.dumps(out, indent=2))
    else:
        for failure in out["failures"]:
            print(f"FAILED: {failure}")
        for note in out["notes"]:
            print(f"note: {note}")
        prov = out.get("provenance")
        if prov:
            print(
                f"provenance: {prov['rows_checked']} rows checked against {len(prov['sources'])} source(s), "
                f"{prov['differing']} differ"
            )
            for d in prov["differences"][:20]:
                print(
                    f"  {d['config']}/{d['split']} row {d['row']} ({d['pair_id']}): {', '.join(d['fields'])}"
                )
            for failure in prov["failures"]:
                print(f"  FAILED: {failure}")
        print(f"audit {'passed' if ok else 'FAILED'}: {target.describe()}")
    return 0 if ok else 1


def _provenance(args: AuditArgs, built, out: dict, own_rulebase=None) -> bool:
    """Rows against their sources; an SPL build passes its own rule base (schema, verdict ranking)."""
    if not args.sources:
        out["notes"].append("no --sources: rows were not checked against their source pools (provenance)")
        return True
    from spl_hf.audit.provenance import check_spl_provenance, check_tenet_provenance

    if own_rulebase is None:
        prov = check_tenet_provenance(built, args.sources, args.max_report)
    else:
        prov = check_spl_provenance(
            built, args.sources, own_rulebase.schema, args.max_report, dict(own_rulebase.verdicts)
        )
    out["provenance"] = prov.to_dict()
    return prov.ok


def run_tenets(args: AuditArgs, as_json: bool, built) -> tuple[dict, bool]:
    from spl_hf.audit.tenets import audit_folder

    report = audit_folder(built, args.max_report)
    out = {"kind": "tenets", **report.to_dict()}
    if args.config_name:
        out["notes"].append("--config_name is ignored for a tenet build: its checks span every config")
    ok = _provenance(args, built, out) and report.ok
    if not as_json:
        print(
            f"{report.rows} rows, {report.reproduced} reproduced, {report.mismatch_count} mismatches; "
            f"assignment certificate {'verified' if report.certificate_ok else 'FAILED'}"
        )
        for failure in report.certificate_failures[:20]:
            print(f"  certificate: {failure}")
    return out, ok


def run_spl(args: AuditArgs, as_json: bool, built) -> tuple[dict, bool]:
    from spl_hf.audit.load import resolve_rulebase, stored_rulebase_hashes
    from spl_hf.audit.spl import audit_spl_folder

    rb, rb_source = resolve_rulebase(built.path, args.rulebase)
    own = resolve_rulebase(built.path, None)[0] if args.rulebase else rb  # the build's own ranking judges
    stored = stored_rulebase_hashes(built.splits)
    counterfactual = bool(args.rulebase) and stored != {rb.hash} and bool(stored)
    result = audit_spl_folder(
        built, rb, judge_rb=own, counterfactual=counterfactual, max_report=args.max_report
    )
    merged = result.rules
    failures = list(built.failures) + result.failures
    out = {"kind": "spl", **merged.to_dict(), "failures": failures, "notes": list(built.notes) + result.notes}
    out["mismatches"] = [
        {"config": s.config, "split": s.split, "row": m.index, "pair_id": m.pair_id, "fields": m.fields}
        for s, r in result.reports + result.judge_reports
        for m in r.mismatches
    ][: args.max_report]
    out["mismatch_count"] = merged.mismatch_count + (result.judge.mismatch_count if result.judge else 0)
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
        ][: args.max_report]
        out["recorded_rulebase_hashes"] = sorted(stored)
    out["rulebase_source"] = rb_source
    out["splits"] = result.per_split()
    ok = _provenance(args, built, out, own) and result.ok and not failures
    if not as_json:
        print(
            f"{merged.rows} rows, {merged.reproduced} reproduced, {merged.mismatch_count} mismatches "
            f"(rule base {rb.id} {rb.hash[:12]} from {rb_source})"
        )
        if result.judge is not None:
            print(
                f"verdict judge: {result.judge.rows} rows, {result.judge.reproduced} reproduced, "
                f"{result.judge.mismatch_count} mismatches"
            )
        if counterfactual:
            print(f"counterfactual: {merged.changed_labels} labels would change")
    return out, ok
