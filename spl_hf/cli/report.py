"""``spl-hf report``: seed statistics of refusal runs, and the judge comparison of an SPL build."""

from __future__ import annotations

import argparse
import json


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text, description="Reports over evaluation runs and built datasets.")
    inner = p.add_subparsers(dest="report", metavar="REPORT", required=True)

    s = inner.add_parser(
        "seeds",
        help="refusal across seeds: per-condition intervals, paired contrasts, at-limit counts, figures",
        description="Read RUNS_DIR/<condition>/seed<k>/eval/<prompt_set>/metrics.json and print, per prompt "
        "set, each condition's mean, sample SD and Student-t interval over seeds (Figure 4), paired contrasts "
        "matched by seed (Figure 5, Table XV) and responses at the token limit (Table XIV); write report.json, "
        "report.md and PNG figures to --out.",
    )
    s.add_argument(
        "runs_dir", metavar="RUNS_DIR", help="sweep folder: <condition>/seed<k>/eval/<prompt_set>/"
    )
    s.add_argument(
        "--out", default=None, help="folder for report files and figures (default: RUNS_DIR/report)"
    )
    s.add_argument(
        "--contrast",
        action="append",
        default=None,
        metavar="FIRST:SECOND",
        help="paired contrast FIRST minus SECOND (repeatable; default: every pair of conditions)",
    )
    s.add_argument("--confidence", type=float, default=0.95, help="interval coverage (default 0.95)")
    s.add_argument("--no-figures", action="store_true", help="write no PNG files")
    s.add_argument("--overwrite", action="store_true", help="replace an earlier report in --out")
    s.add_argument("--json", action="store_true", help="print the report as JSON")
    s.set_defaults(func=run_seeds)

    j = inner.add_parser(
        "judge",
        help="judge comparison: common-support pairs and verdict composition under both labelings",
        description="Compare an SPL build's prompt-shared labels with verdict-judge labels (Table X): the pairs "
        "labeled under both (common support), the verdict composition under each, and how often they agree. "
        "With --out, writes the common-support pairs as DPO rows under each labeling for training.",
    )
    j.add_argument("build", help="SPL dataset folder written by the SPL build (has derivations/*.parquet)")
    j.add_argument(
        "--verdicts",
        default=None,
        help="verdict-judge output: pair labels (spl-hf label --pair-labels) or per-response verdicts "
        "(default: the judge labels the build recorded in its judge_derivations config)",
    )
    j.add_argument("--out", default=None, help="folder for comparison.json and the two common-support files")
    j.add_argument("--overwrite", action="store_true", help="replace an earlier comparison in --out")
    j.add_argument("--json", action="store_true", help="print the comparison as JSON")
    j.set_defaults(func=run_judge)


def run_seeds(args: argparse.Namespace) -> int:
    from spl_hf.report import parse_contrast
    from spl_hf.report.write import write_seed_report

    contrasts = [parse_contrast(c) for c in args.contrast] if args.contrast else None
    report, _, written = write_seed_report(
        args.runs_dir,
        args.out,
        contrasts,
        confidence=args.confidence,
        figures=not args.no_figures,
        overwrite=args.overwrite,
    )
    if args.json:
        print(
            json.dumps({**report.to_dict(), "written": [str(p) for p in written]}, indent=2, sort_keys=True)
        )
    else:
        print(report.to_markdown(), end="")
        print(f"\nwrote {', '.join(str(p) for p in written)}")
    return 0


def run_judge(args: argparse.Namespace) -> int:
    from spl_hf.report.judge_comparison import compare_build, write_comparison

    if args.out:
        from spl_hf.outputs import guard_dir

        guard_dir(args.out, overwrite=args.overwrite, inputs=[p for p in (args.build, args.verdicts) if p])
    result = compare_build(args.build, args.verdicts)
    data = result.to_dict()
    if args.out:
        data["written"] = [str(p) for p in write_comparison(result, args.out)]
    if args.json:
        print(json.dumps(data, indent=2, sort_keys=True))
    else:
        print(result.to_markdown(), end="")
        if args.out:
            print(f"\nwrote {', '.join(data['written'])}")
    return 0
