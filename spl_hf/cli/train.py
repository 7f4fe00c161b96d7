"""`spl-hf train sweep`: seed x condition sweeps of train.py, laid out as <out>/<condition>/seed<k>/."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str, action: str | None = None) -> None:
    from spl_hf.configs import OutputDirArgs, add_config_parser
    from spl_hf.train import SweepArgs

    p = sub.add_parser(name, help=help_text, description=help_text)
    tsub = p.add_subparsers(dest="train_command", metavar="ACTION", required=True)
    s = add_config_parser(
        tsub,
        "sweep",
        (SweepArgs, OutputDirArgs),
        defaults={"output_dir": "runs"},
        help="train one run per (condition, seed), skipping finished runs",
        description="Run train.py once per condition and seed, sequentially, into "
        "OUTPUT_DIR/<condition>/seed<k>/. A run whose run.json exists is skipped, so a killed sweep resumes. "
        "Flags after `--` go to every train.py run (e.g. -- --dataset_name spl-hf/spl --max_steps 100).",
    )
    s.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import shlex

    from spl_hf.configs import configs_from_args
    from spl_hf.train import parse_conditions, parse_seeds, plan, prepare_root, run_sweep

    sweep, output = configs_from_args(args)
    out = output.output_dir
    seeds, conditions = parse_seeds(sweep.seeds), parse_conditions(sweep.conditions)
    extra = list(sweep.train_args)
    if extra[:1] == ["--"]:
        extra = extra[1:]
    if sweep.dataset:
        extra = ["--dataset_name", sweep.dataset, *extra]
    runs = plan(sweep.recipe, seeds, conditions, out, extra, sweep.accelerate_config)
    if sweep.dry_run:
        for r in runs:
            print(shlex.join(r.argv))
        return 0
    prepare_root(out, sweep.recipe, seeds, conditions)
    report = run_sweep(runs)
    print(
        f"sweep {out}: {len(report.ran)} trained, {len(report.skipped)} already finished, "
        f"{len(report.failed)} failed"
    )
    for out, code in report.failed:
        print(f"  failed (exit {code}): {out}")
    return 1 if report.failed else 0
