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
    from spl_hf.audit import audit

    report = audit(
        args.path,
        revision=args.revision,
        rulebase=args.rulebase,
        sources=args.sources,
        manifest=not args.no_manifest,
        config=args.config,
        max_report=args.max_report,
    )
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        _print_report(report)
    return 0 if report.ok else 1


def _print_report(report) -> None:
    for line in report.summary:
        print(line)
    for failure in report.failures:
        print(f"FAILED: {failure}")
    for note in report.notes:
        print(f"note: {note}")
    prov = report.provenance
    if prov:
        print(
            f"provenance: {prov['rows_checked']} rows checked against {len(prov['sources'])} source(s), "
            f"{prov['differing']} differ"
        )
        for d in prov["differences"][:20]:
            print(f"  {d['config']}/{d['split']} row {d['row']} ({d['pair_id']}): {', '.join(d['fields'])}")
        for failure in prov["failures"]:
            print(f"  FAILED: {failure}")
    print(f"audit {'passed' if report.ok else 'FAILED'}: {report.target}")
