"""`spl-hf rules check`: coverage, overlaps and conflicts of a rule base over the whole schema."""

from __future__ import annotations

import argparse
import json


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str, action: str | None = None) -> None:
    from spl_hf.configs import JsonArgs, add_config_parser
    from spl_hf.rules import RulesArgs

    p = sub.add_parser(name, help=help_text, description=help_text)
    rsub = p.add_subparsers(dest="rules_command", metavar="ACTION", required=True)
    c = add_config_parser(
        rsub,
        "check",
        (RulesArgs, JsonArgs),
        help="enumerate every schema assignment and report rule counts, overlaps and conflicts",
        description="Enumerate every assignment of the attribute schema and apply the rule base. "
        "Exits 1 when rules with different verdicts can fire together.",
    )
    c.set_defaults(func=run_check)
    s = add_config_parser(
        rsub,
        "show",
        (RulesArgs,),
        help="print the rule base in canonical form with its hash",
        description="Print the rule base in canonical form with its hash.",
    )
    s.set_defaults(func=run_show)


def _load(path: str | None):
    from spl_hf.rules import default_rulebase, load_rulebase

    return load_rulebase(path) if path else default_rulebase()


def run_check(args: argparse.Namespace) -> int:
    from spl_hf.rules import check_coverage

    report = check_coverage(_load(args.rulebase))
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        print(
            f"rule base {report.rulebase_id} ({report.rulebase_hash[:12]}): {report.assignments} assignments"
        )
        for rid, n in report.rule_counts.items():
            print(f"  {rid:>6}  {n:6d}")
        more = "" if report.overlaps_complete else f" (first {len(report.overlaps)} listed; more exist)"
        print(f"  overlaps: {[(o.rules, o.count) for o in report.overlaps]}{more}")
        more = "" if report.conflicts_complete else f" (first {len(report.conflicts)} listed; more exist)"
        print(
            f"  conflicts: {len(report.conflicts)}{more} on {report.conflict_assignments} assignments; "
            f"no verdict: {report.no_verdict}"
        )
        for c in report.conflicts:
            print(f"    {c.rules} -> {c.verdicts} on {c.count}, e.g. {c.example}")
    return 1 if report.conflict_assignments else 0


def run_show(args: argparse.Namespace) -> int:
    rb = _load(args.rulebase)
    print(f"# sha256 {rb.hash}")
    print(rb.to_yaml(), end="")
    return 0
