"""``spl-hf generate``: K candidate responses per prompt under named instructions."""

from __future__ import annotations

import argparse

from spl_hf.cli._backend_args import add_model_args, add_run_args, load_backend, report, write_outputs


def add_parser(subparsers: argparse._SubParsersAction, name: str, help_text: str) -> None:
    from spl_hf.backends.generate import INSTRUCTIONS  # no torch: safe for --help

    p = subparsers.add_parser(
        name,
        help=help_text,
        description=(
            "Generate candidates for each distinct prompt (rows with prompt_id and prompt messages) under "
            f"each named instruction ({', '.join(INSTRUCTIONS)}). Output rows (prompt_id, response_id, "
            "prompt, response, instruction, limit, hit_limit, seed) can be labeled with `spl-hf label`."
        ),
    )
    p.add_argument("--prompts", required=True, help="prompt rows (.parquet or .jsonl)")
    p.add_argument("--instructions", default="comply,refuse", help="comma-separated instruction names")
    p.add_argument(
        "--k", type=int, default=1, help="candidates per (prompt, instruction); > 1 needs --sample"
    )
    p.add_argument("--max-new-tokens", type=int, default=128)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--sample", action="store_true", help="sample (seeded per item) instead of greedy")
    p.add_argument("--temperature", type=float, default=0.7)
    add_model_args(p)
    add_run_args(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:

    from spl_hf.backends.cache import ResultCache
    from spl_hf.backends.generate import CandidateGenerator, GenerationConfig, prompts_from_rows
    from spl_hf.backends.io import read_rows
    from spl_hf.backends.parallel import Ranks

    config = GenerationConfig(
        instructions=[s.strip() for s in args.instructions.split(",") if s.strip()],
        k=args.k,
        max_new_tokens=args.max_new_tokens,
        seed=args.seed,
        do_sample=args.sample,
        temperature=args.temperature,
        progress=not args.no_progress,
    )
    ranks = Ranks()
    prompts, failures = prompts_from_rows(read_rows(args.prompts, args.limit))
    backend = load_backend(args)
    gen = CandidateGenerator(backend, config)
    items = gen.items(prompts)
    with ResultCache(args.cache) as cache:
        stats = gen.run(ranks.shard(items), cache)
        ranks.wait()
        if not ranks.is_main:
            return 0
        rows = gen.collect(items, cache)
    failures += stats["failures"]
    write_outputs(args.out, rows, failures)
    report(
        args,
        {
            "out": args.out,
            "rows": len(rows),
            "hit_limit": sum(r["hit_limit"] for r in rows),
            "computed": stats["computed"],
            "cached": stats["cached"],
            "failed": len(failures),
            "failures": failures,
            "model_id": backend.info.model_id,
            "model_revision": backend.info.revision,
            "template_hash": gen.template_hash,
        },
    )
    return 0
