"""`spl-hf audit`: recompute every row of a built dataset from the files on disk (or at a Hub revision)."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass

SHOWN_MISMATCHES = 10  # the text output names this many mismatched rows; --json lists up to --max_report


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str, action: str | None = None) -> None:
    from spl_hf.audit import AuditArgs
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
    from spl_hf.audit import audit
    from spl_hf.configs import configs_from_args

    a, rev, js = configs_from_args(args)
    report = audit(
        a.path,
        revision=rev.revision,
        rulebase=a.rulebase,
        sources=a.sources,
        manifest=a.manifest,
        config=a.config_name,
        max_report=a.max_report,
    )
    if js.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        _print_report(report)
    return 0 if report.ok else 1


def _print_report(report) -> None:
    for line in report.summary:
        print(line)
    for m in report.mismatches[:SHOWN_MISMATCHES]:
        ident = m.get("pair_id") or m.get("id")
        print(f"  mismatch: {m['config']}/{m['split']} row {m['row']} ({ident}): {', '.join(m['fields'])}")
    if report.mismatch_count > min(len(report.mismatches), SHOWN_MISMATCHES):
        print(
            f"  ... {report.mismatch_count - min(len(report.mismatches), SHOWN_MISMATCHES)} more (--json lists them)"
        )
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
