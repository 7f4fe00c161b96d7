"""``spl-hf judge``: per-tenet pairwise scores for unified pair rows, cached and resumable."""

from __future__ import annotations

import argparse
from dataclasses import asdict

from spl_hf.cli._backend_args import add_model_args, add_run_args, load_backend, report, write_outputs


def add_parser(subparsers: argparse._SubParsersAction, name: str, help_text: str) -> None:
    p = subparsers.add_parser(
        name,
        help=help_text,
        description=(
            "Score each (pair, tenet) with an LM judge in both response orderings. Output rows carry "
            "pair_id, prompt_id, tenet, score plus the per-ordering probabilities and model/template "
            "hashes, so `spl-hf assign --scores` can use them and an audit can recompute every score. "
            "Under `accelerate launch` each process takes a shard; rank 0 writes the output."
        ),
    )
    p.add_argument("--pairs", required=True, help="unified pair rows (.parquet or .jsonl)")
    p.add_argument("--tenets", default="all", help="comma-separated tenet names, or 'all'")
    p.add_argument("--tenets-file", default=None, help="YAML of tenet statements (default: the 49 built in)")
    p.add_argument("--chunk-size", type=int, default=8, help="tenet questions per forward pass")
    p.add_argument("--commit-every", type=int, default=1, help="pairs per cache transaction")
    add_model_args(p)
    add_run_args(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from spl_hf.backends.cache import ResultCache
    from spl_hf.backends.io import read_rows, require_columns
    from spl_hf.backends.judge import BadRow, JudgeConfig, PairwiseJudge, parse_pairs
    from spl_hf.backends.parallel import Ranks
    from spl_hf.tenets import default_tenets, load_tenets, select_tenets

    tenet_set = load_tenets(args.tenets_file) if args.tenets_file else default_tenets()
    tenets = select_tenets(args.tenets, tenet_set)
    rows = read_rows(args.pairs, args.limit)
    require_columns(rows, ("pair_id", "prompt", "response_a", "response_b"), args.pairs)
    pairs, bad = parse_pairs(rows)

    ranks = Ranks()
    backend = load_backend(args, chunk_size=args.chunk_size)
    judge = PairwiseJudge(
        backend,
        JudgeConfig(
            chunk_size=args.chunk_size, commit_every=max(1, args.commit_every), progress=not args.no_progress
        ),
    )
    with ResultCache(args.cache) as cache:
        stats = judge.run(ranks.shard(pairs), tenets, cache)
        ranks.wait()
        if not ranks.is_main:
            return 0
        out_rows = judge.collect(pairs, tenets, cache)
        done = {r["pair_id"] for r in out_rows}
        # Pairs another rank could not score: find the reason again here (a cheap check, no model).
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
    fpath = write_outputs(args.out, out_rows, failures)
    report(
        args,
        {
            "out": args.out,
            "rows": len(out_rows),
            "pairs": len(pairs),
            "tenets": len(tenets),
            "computed": stats.computed,  # by this process (rank 0 under a launcher)
            "cached": stats.cached,
            "forward_calls": backend.forward_calls,
            "failed": len(failures),
            "failures": failures,
            "failures_file": fpath,
            "model_id": backend.info.model_id,
            "model_revision": backend.info.revision,
            "template_hash": judge.template_hash,
        },
    )
    return 0
