"""`spl-hf audit`: recompute every row of a built SPL dataset from its recorded derivation."""

from __future__ import annotations

import argparse
import json


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str) -> None:
    p = sub.add_parser(
        name,
        help=help_text,
        description="Recompute verdicts, labels and digests of every row from its stored components "
        "(no model). Exits 0 only when every row reproduces. With a --rulebase whose hash differs from "
        "the one recorded, reports which labels would change (counterfactual) without failing.",
    )
    p.add_argument("path", help="dataset folder or Hub repo id")
    p.add_argument("--config", help="config to audit (default: every config)")
    p.add_argument("--rulebase", help="rule base YAML (default: the build's rulebase.yaml, else packaged)")
    p.add_argument("--max-report", type=int, default=1000, help="list at most this many rows")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from spl_hf.audit.tenets import audit_tenet_build, is_tenet_build

    if is_tenet_build(args.path):
        from spl_hf.hub.folder import verify_manifest

        report = audit_tenet_build(args.path, args.max_report)
        out = report.to_dict()
        out["kind"] = "tenets"
        out["manifest_mismatches"] = verify_manifest(args.path)
        if args.json:
            print(json.dumps(out, indent=2))
        else:
            print(f"{report.rows} rows, {report.reproduced} reproduced, {report.mismatch_count} mismatches; "
                  f"assignment certificate {'verified' if report.certificate_ok else 'FAILED'}")
        return 0 if report.ok and not out["manifest_mismatches"] else 1
    return run_spl(args)


def run_spl(args: argparse.Namespace) -> int:
    from spl_hf.audit.load import load_built, resolve_rulebase, stored_rulebase_hashes
    from spl_hf.audit.verify import audit_batches, merge_reports
    from spl_hf.hub.folder import verify_manifest

    rb, rb_source = resolve_rulebase(args.path, args.rulebase)
    splits = load_built(args.path, args.config)
    stored = stored_rulebase_hashes(splits)
    counterfactual = bool(args.rulebase) and stored != {rb.hash} and bool(stored)
    reports = []
    per_split = {}
    for s in splits:
        r = audit_batches(s.table, rb, counterfactual=counterfactual)
        per_split[f"{s.config}/{s.split}"] = {"rows": r.rows, "reproduced": r.reproduced}
        reports.append((s, r))
    merged = merge_reports([r for _, r in reports], args.max_report)
    out = merged.to_dict()
    out["mismatches"] = [
        {"config": s.config, "split": s.split, "row": m.index, "pair_id": m.pair_id, "fields": m.fields}
        for s, r in reports
        for m in r.mismatches
    ][: args.max_report]
    if counterfactual:
        out["changes"] = [
            {"config": s.config, "split": s.split, "row": c.index, "pair_id": c.pair_id,
             "before": c.before, "after": c.after}
            for s, r in reports
            for c in r.changes
        ][: args.max_report]
        out["recorded_rulebase_hashes"] = sorted(stored)
    out["rulebase_source"] = rb_source
    out["splits"] = per_split
    bad_files = verify_manifest(args.path)
    out["manifest_mismatches"] = bad_files
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print(f"{merged.rows} rows, {merged.reproduced} reproduced, {merged.mismatch_count} mismatches "
              f"(rule base {rb.id} {rb.hash[:12]} from {rb_source})")
        if counterfactual:
            print(f"counterfactual: {merged.changed_labels} labels would change")
        if bad_files:
            print(f"files differing from MANIFEST.sha256: {bad_files}")
    return 0 if merged.mismatch_count == 0 and not bad_files else 1
