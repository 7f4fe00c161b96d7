"""``spl-hf report``: seed statistics of refusal runs, and the judge comparison of an SPL build."""

from __future__ import annotations

import argparse
import json


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str, action: str | None = None) -> None:
    from spl_hf.configs import JsonArgs, OutputArgs, add_config_parser
    from spl_hf.report import JudgeReportArgs, SeedReportArgs

    p = sub.add_parser(name, help=help_text, description="Reports over evaluation runs and built datasets.")
    inner = p.add_subparsers(dest="report", metavar="REPORT", required=True)
    s = add_config_parser(
        inner,
        "seeds",
        (SeedReportArgs, OutputArgs, JsonArgs),
        help="refusal across seeds: per-condition intervals, paired contrasts, at-limit counts, figures",
        description="Read RUNS_DIR/<condition>/seed<k>/eval/<prompt_set>/metrics.json and print, per prompt "
        "set, each condition's mean, sample SD and Student-t interval over seeds (Figure 4), paired contrasts "
        "matched by seed (Figure 5, Table XV) and responses at the token limit (Table XIV); write report.json, "
        "report.md and PNG figures to --output_dir (default: RUNS_DIR/report).",
    )
    s.set_defaults(func=run_seeds)
    j = add_config_parser(
        inner,
        "judge",
        (JudgeReportArgs, OutputArgs, JsonArgs),
        help="judge comparison: common-support pairs and verdict composition under both labelings",
        description="Compare an SPL build's prompt-shared labels with verdict-judge labels (Table X): the pairs "
        "labeled under both (common support), the verdict composition under each, and how often they agree. "
        "With --output_dir, writes comparison.json and the common-support pairs as DPO rows under each "
        "labeling for training.",
    )
    j.set_defaults(func=run_judge)


def run_seeds(args: argparse.Namespace) -> int:
    from spl_hf.configs import configs_from_args
    from spl_hf.report import parse_contrast, write_seed_report

    task, output, js = configs_from_args(args)
    contrasts = [parse_contrast(c) for c in task.contrast] if task.contrast else None
    report, _, written = write_seed_report(
        task.runs_dir,
        output.output_dir,
        contrasts,
        confidence=task.confidence,
        figures=task.figures,
        overwrite=output.overwrite,
    )
    if js.json:
        print(
            json.dumps({**report.to_dict(), "written": [str(p) for p in written]}, indent=2, sort_keys=True)
        )
    else:
        print(report.to_markdown(), end="")
        print(f"\nwrote {', '.join(str(p) for p in written)}")
    return 0


def run_judge(args: argparse.Namespace) -> int:
    from spl_hf.configs import configs_from_args
    from spl_hf.report import compare_build, write_comparison

    task, output, js = configs_from_args(args)
    out = output.output_dir
    if out:
        from spl_hf.outputs import guard_dir

        guard_dir(out, overwrite=output.overwrite, inputs=[p for p in (task.build, task.verdicts) if p])
    result = compare_build(task.build, task.verdicts)
    data = result.to_dict()
    if out:
        data["written"] = [str(p) for p in write_comparison(result, out)]
    if js.json:
        print(json.dumps(data, indent=2, sort_keys=True))
    else:
        print(result.to_markdown(), end="")
        if out:
            print(f"\nwrote {', '.join(data['written'])}")
    return 0
