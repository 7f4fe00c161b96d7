"""``spl-hf judge``: per-tenet pairwise scores for unified pair rows, cached and resumable."""

from __future__ import annotations

import argparse
from dataclasses import asdict

from spl_hf.backends import JudgeInputs
from spl_hf.cli._backend_args import add_backend_parser, prepare_run, report, write_outputs


def add_parser(subparsers: argparse._SubParsersAction, name: str, help_text: str) -> None:
    from spl_hf.backends import JudgeConfig  # no torch: safe for --help

    p = add_backend_parser(
        subparsers,
        name,
        JudgeInputs,
        JudgeConfig,
        help=help_text,
        description=(
            "Score each (pair, tenet) with an LM judge in both response orderings. Output rows carry "
            "pair_id, prompt_id, tenet, score plus the per-ordering probabilities and model/template "
            "hashes, so `spl-hf assign --scores` can use them and an audit can recompute every score. "
            "With --executor ray the work runs on engine replicas (a Ray cluster or a local Ray runtime)."
        ),
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from spl_hf.backends import (
        judge_items,
        judge_outcome,
        judge_stage,
        parse_pairs,
        read_rows,
        require_columns,
        run_stage,
    )
    from spl_hf.configs import configs_from_args
    from spl_hf.tenets import default_tenets, load_tenets, select_tenets

    task, config, model, run_args, executor, output, js = configs_from_args(args)
    out, store = prepare_run(run_args, output, [task.pairs, task.tenets_file], executor=executor)
    tenet_set = load_tenets(task.tenets_file) if task.tenets_file else default_tenets()
    tenets = select_tenets(task.tenets, tenet_set)
    rows = read_rows(task.pairs, run_args.limit)
    require_columns(rows, ("pair_id", "prompt", "response_a", "response_b"), task.pairs)
    pairs, bad = parse_pairs(rows)
    if rows and not pairs:
        raise ValueError(
            f"{task.pairs}: none of the {len(rows)} rows is a valid pair (first: {bad[0].reason})"
        )
    stage = judge_stage(model, config)
    result = run_stage(stage, judge_items(pairs, tenets), store, executor)
    out_rows, judge_failures, not_judged = judge_outcome(result, tenets)
    failures = [asdict(b) for b in bad] + judge_failures
    fpath = write_outputs(out, out_rows, failures)
    first = out_rows[0] if out_rows else {}
    report(
        js.json,
        {
            "out": out,
            "rows": len(out_rows),
            "pairs": len(pairs),
            "tenets": len(tenets),
            "computed": result.computed,
            "cached": result.cached,
            "shards": result.stats["shards"],
            "forward_calls": result.stats.get("forward_calls") or 0,  # by this process (local executor)
            "not_judged": sum(not_judged.values()),
            "failed": len(failures),
            "failures": failures,
            "failures_file": fpath,
            "model_id": first.get("model_id"),
            "model_revision": first.get("model_revision"),
            "template_hash": first.get("template_hash"),
        },
    )
    return 0
