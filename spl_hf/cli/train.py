"""`spl-hf train sweep`: seed x condition sweeps of train.py, laid out as <out>/<condition>/seed<k>/."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text, description=help_text)
    tsub = p.add_subparsers(dest="train_command", metavar="ACTION", required=True)
    s = tsub.add_parser(
        "sweep",
        help="train one run per (condition, seed), skipping finished runs",
        description="Run train.py once per condition and seed, sequentially, into OUT/<condition>/seed<k>/. "
        "A run whose run.json exists is skipped, so a killed sweep resumes. Flags after `--` go to "
        "every train.py run (e.g. -- --dataset_name spl-hf/spl --max_steps 100).",
    )
    s.add_argument("--recipe", required=True, help="train.py recipe, e.g. recipes/train/spl_dpo_gemma.yaml")
    s.add_argument("--seeds", required=True, help="comma-separated run seeds, e.g. 1,2,3,4,5")
    s.add_argument(
        "--conditions",
        required=True,
        help="comma-separated NAME=CONFIG: folder name and the dataset config it trains on",
    )
    s.add_argument("--out", default="runs", help="sweep root folder (default: runs)")
    s.add_argument(
        "--dataset", default=None, help="dataset (folder or Hub id) for every run; default: the recipe's"
    )
    s.add_argument(
        "--accelerate-config",
        default=None,
        help="start each run with `accelerate launch --config_file F` (e.g. recipes/accelerate/multi_gpu.yaml)",
    )
    s.add_argument("--dry-run", action="store_true", help="print the planned commands and exit")
    s.add_argument(
        "train_args", nargs=argparse.REMAINDER, help="`--` then flags passed to every train.py run"
    )
    s.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import shlex

    from spl_hf.train.sweep import parse_conditions, parse_seeds, plan, prepare_root, run_sweep

    seeds, conditions = parse_seeds(args.seeds), parse_conditions(args.conditions)
    extra = list(args.train_args)
    if extra[:1] == ["--"]:
        extra = extra[1:]
    if args.dataset:
        extra = ["--dataset_name", args.dataset, *extra]
    runs = plan(args.recipe, seeds, conditions, args.out, extra, args.accelerate_config)
    if args.dry_run:
        for r in runs:
            print(shlex.join(r.argv))
        return 0
    prepare_root(args.out, args.recipe, seeds, conditions)
    report = run_sweep(runs)
    print(
        f"sweep {args.out}: {len(report.ran)} trained, {len(report.skipped)} already finished, "
        f"{len(report.failed)} failed"
    )
    for out, code in report.failed:
        print(f"  failed (exit {code}): {out}")
    return 1 if report.failed else 0
