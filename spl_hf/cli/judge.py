"""``spl-hf judge``: per-tenet pairwise scores for unified pair rows, cached and resumable."""

from __future__ import annotations

import argparse
from dataclasses import asdict

from spl_hf.backends import JudgeInputs, load_backend
from spl_hf.cli._backend_args import add_backend_parser, prepare_run, report, write_outputs
from spl_hf.errors import SplHfError


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
            "Under `accelerate launch` each process takes a shard; rank 0 writes the output."
        ),
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from spl_hf.backends import (
        JUDGE_LABELS,
        BadRow,
        NotJudged,
        PairwiseJudge,
        Ranks,
        ResultCache,
        parse_pairs,
        require_columns,
    )
    from spl_hf.configs import configs_from_args
    from spl_hf.jsonl import read_rows
    from spl_hf.tenets import default_tenets, load_tenets, select_tenets

    task, config, model, run_args, output, js = configs_from_args(args)
    out = prepare_run(run_args, output, [task.pairs, task.tenets_file])
    tenet_set = load_tenets(task.tenets_file) if task.tenets_file else default_tenets()
    tenets = select_tenets(task.tenets, tenet_set)
    rows = read_rows(task.pairs, run_args.limit)
    require_columns(rows, ("pair_id", "prompt", "response_a", "response_b"), task.pairs)
    pairs, bad = parse_pairs(rows)
    if rows and not pairs:
        raise SplHfError(
            f"{task.pairs}: none of the {len(rows)} rows is a valid pair (first: {bad[0].reason})"
        )

    ranks = Ranks()
    # The answer labels are checked against the tokenizer before the weights load.
    backend = load_backend(model, chunk_size=config.chunk_size, labels=JUDGE_LABELS)
    judge = PairwiseJudge(backend, config)
    with ResultCache(run_args.cache) as cache:
        stats = judge.run(ranks.shard(pairs), tenets, cache)
        ranks.wait()
        if not ranks.is_main:
            return 0
        not_judged = NotJudged()
        out_rows = judge.collect(pairs, tenets, cache, not_judged)
        # Every judgement with no row is reported once: refused pairs (found again here when another
        # rank refused them: a cheap check, no model), bad rows, and each not-judged (pair, tenet).
        done = {r["pair_id"] for r in out_rows} | {f.pair_id for f in not_judged.failures}
        failures = [asdict(b) for b in bad]
        known = {f.pair_id: f.reason for f in stats.failures}
        for pair in pairs:
            if pair.pair_id not in done:
                reason = known.get(pair.pair_id, "not scored")
                if pair.pair_id not in known:
                    try:
                        judge.precheck(pair, tenets)
                    except ValueError as exc:
                        reason = str(exc)
                failures.append(asdict(BadRow(-1, pair.pair_id, reason)))
        n_failed = len(failures)
        failures += [asdict(f) for f in not_judged.failures]
    fpath = write_outputs(out, out_rows, failures)
    report(
        js.json,
        {
            "out": out,
            "rows": len(out_rows),
            "pairs": len(pairs),
            "tenets": len(tenets),
            "computed": stats.computed,  # by this process (rank 0 under a launcher)
            "cached": stats.cached,
            "forward_calls": backend.forward_calls,
            "failed": n_failed,  # bad rows and pairs refused before scoring
            "not_judged": not_judged.total,  # below min_label_mass: no row, each listed in failures
            "not_judged_by_tenet": not_judged.by_tenet,
            "boundary_fallbacks": stats.boundary_fallbacks,
            "failures": failures,
            "failures_file": fpath,
            "model_id": backend.info.model_id,
            "model_revision": backend.info.revision,
            "template_hash": judge.template_hash,
        },
    )
    return 0
