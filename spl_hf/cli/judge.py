"""``spl-hf judge``: per-tenet pairwise scores for unified pair rows, cached and resumable."""

from __future__ import annotations

import argparse
from dataclasses import asdict

from spl_hf.backends import JudgeInputs
from spl_hf.cli._backend_args import add_backend_parser, prepare_run, report, write_outputs
from spl_hf.errors import SplHfError


def add_parser(
    subparsers: argparse._SubParsersAction, name: str, help_text: str, action: str | None = None
) -> None:
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
        require_columns,
        run_stage,
    )
    from spl_hf.configs import configs_from_args
    from spl_hf.jsonl import read_rows
    from spl_hf.tenets import default_tenets, load_tenets, select_tenets

    task, config, model, run_args, executor, output, js = configs_from_args(args)
    out, store = prepare_run(run_args, output, [task.pairs, task.tenets_file], executor=executor)
    tenet_set = load_tenets(task.tenets_file) if task.tenets_file else default_tenets()
    tenets = select_tenets(task.tenets, tenet_set)
    rows = read_rows(task.pairs, run_args.limit)
    require_columns(rows, ("pair_id", "prompt", "response_a", "response_b"), task.pairs)
    pairs, bad = parse_pairs(rows)
    if rows and not pairs:
        raise SplHfError(
            f"{task.pairs}: none of the {len(rows)} rows is a valid pair (first: {bad[0].reason})"
        )
    result = run_stage(judge_stage(model, config), judge_items(pairs, tenets), store, executor)
    out_rows, refused, not_judged = judge_outcome(result, tenets)
    # Every judgement with no row is reported once: bad rows, pairs refused before scoring (each of
    # their tenets), and each not-judged (pair, tenet).
    failures = [asdict(b) for b in bad] + refused
    n_failed = len(failures)
    failures += [asdict(f) for f in not_judged.failures]
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
            "failed": n_failed,  # bad rows and (pair, tenet)s refused before scoring
            "not_judged": not_judged.total,  # below min_label_mass: no row, each listed in failures
            "not_judged_by_tenet": not_judged.by_tenet,
            "boundary_fallbacks": result.stats.get("boundary_fallbacks") or 0,
            "failures": failures,
            "failures_file": fpath,
            "model_id": first.get("model_id"),
            "model_revision": first.get("model_revision"),
            "template_hash": first.get("template_hash"),
        },
    )
    return 0
