"""`spl-hf audit`: recompute every row of a built dataset from the files on disk (or at a Hub revision)."""

from __future__ import annotations

import argparse
import json


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str) -> None:
    p = sub.add_parser(
        name,
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
    p.add_argument("path", help="dataset folder, or a Hub dataset repo id (with --revision)")
    p.add_argument("--revision", help="Hub revision (commit or tag) to audit when PATH is a repo id")
    p.add_argument("--config", help="SPL builds: config to audit (default: every config)")
    p.add_argument(
        "--rulebase", help="SPL builds: rule base YAML (default: the build's rulebase.yaml, else packaged)"
    )
    p.add_argument(
        "--sources",
        nargs="+",
        metavar="SPEC",
        help="check provenance against the sources: tenet builds POOL=FILE, POOL=ORG/NAME@REVISION or a "
        "unified pair-rows file; SPL builds prompts=FILE candidates=FILE [verdicts=FILE]",
    )
    p.add_argument(
        "--no-manifest",
        action="store_true",
        help="audit without MANIFEST.sha256 (then files outside the declared data are not checked; reported)",
    )
    p.add_argument("--max-report", type=int, default=1000, help="list at most this many rows")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from spl_hf.audit.hub import audit_target
    from spl_hf.audit.load import read_folder

    if args.max_report < 0:
        raise ValueError(f"--max-report must be >= 0, got {args.max_report}")
    with audit_target(args.path, args.revision) as target:
        built = read_folder(
            target.folder, config=args.config, manifest=not args.no_manifest, ignore=target.ignore
        )
        if built.kind == "tenets" and args.config:  # a tenet build's checks span every config
            built = read_folder(target.folder, manifest=not args.no_manifest, ignore=target.ignore)
        out, ok = run_tenets(args, built) if built.kind == "tenets" else run_spl(args, built)
        if target.repo_id:
            out["repo_id"], out["revision"] = target.repo_id, target.revision
    if built.manifest is not None:
        out["manifest_mismatches"] = built.manifest.mismatched
        out["unlisted_files"] = built.manifest.unlisted
    if args.json:
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


def _provenance(args: argparse.Namespace, built, out: dict, own_rulebase=None) -> bool:
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


def run_tenets(args: argparse.Namespace, built) -> tuple[dict, bool]:
    from spl_hf.audit.tenets import audit_folder

    report = audit_folder(built, args.max_report)
    out = {"kind": "tenets", **report.to_dict()}
    if args.config:
        out["notes"].append("--config is ignored for a tenet build: its checks span every config")
    ok = _provenance(args, built, out) and report.ok
    if not args.json:
        print(
            f"{report.rows} rows, {report.reproduced} reproduced, {report.mismatch_count} mismatches; "
            f"assignment certificate {'verified' if report.certificate_ok else 'FAILED'}"
        )
        for failure in report.certificate_failures[:20]:
            print(f"  certificate: {failure}")
    return out, ok


def run_spl(args: argparse.Namespace, built) -> tuple[dict, bool]:
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
    if not args.json:
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
