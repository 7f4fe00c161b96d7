"""``spl-hf generate``: K candidate responses per prompt under named instructions."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field

from spl_hf.cli._backend_args import add_backend_parser, load_backend, prepare_run, report, write_outputs


@dataclass
class GenerateArgs:
    prompts: str = field(metadata={"help": "Prompt rows (.parquet or .jsonl)."})
    instructions: str = field(default="comply,refuse", metadata={"help": "Comma-separated instruction names."})
    k: int = field(default=1, metadata={"help": "Candidates per (prompt, instruction); > 1 needs --sample."})
    max_new_tokens: int = field(default=128, metadata={"help": "Token limit per candidate."})
    seed: int = field(default=0, metadata={"help": "Run seed; each item's seed is derived from it."})
    sample: bool = field(default=False, metadata={"help": "Sample (seeded per item) instead of greedy."})
    temperature: float = field(default=0.7, metadata={"help": "Sampling temperature."})

    def generation_config(self, progress: bool) -> object:
        """The generator's own config, which validates these values (before any model is loaded)."""
        from spl_hf.backends.generate import GenerationConfig

        return GenerationConfig(
            instructions=[s.strip() for s in self.instructions.split(",") if s.strip()],
            k=self.k,
            max_new_tokens=self.max_new_tokens,
            seed=self.seed,
            do_sample=self.sample,
            temperature=self.temperature,
            progress=progress,
        )

    def __post_init__(self) -> None:
        self.generation_config(progress=False)


def add_parser(subparsers: argparse._SubParsersAction, name: str, help_text: str) -> None:
    from spl_hf.backends.generate import INSTRUCTIONS  # no torch: safe for --help

    p = add_backend_parser(
        subparsers,
        name,
        GenerateArgs,
        help=help_text,
        description=(
            "Generate candidates for each distinct prompt (rows with prompt_id and prompt messages) under "
            f"each named instruction ({', '.join(INSTRUCTIONS)}). Output rows (prompt_id, response_id, "
            "prompt, response, instruction, limit, hit_limit, seed) can be labeled with `spl-hf label`."
        ),
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:

    from spl_hf.backends.cache import ResultCache
    from spl_hf.backends.generate import CandidateGenerator, prompts_from_rows
    from spl_hf.backends.io import read_rows
    from spl_hf.backends.parallel import Ranks
    from spl_hf.configs import configs_from_args

    task, model, run_args = configs_from_args(args)
    config = task.generation_config(progress=not run_args.no_progress)
    prepare_run(run_args, [task.prompts])
    ranks = Ranks()
    rows = read_rows(task.prompts, run_args.limit)
    prompts, failures = prompts_from_rows(rows)
    if rows and not prompts:
        raise ValueError(
            f"{task.prompts}: none of the {len(rows)} rows is a prompt (prompt_id and prompt messages); "
            f"first: {failures[0]['reason']}"
        )
    backend = load_backend(model)
    gen = CandidateGenerator(backend, config)
    items = gen.items(prompts)
    with ResultCache(run_args.cache) as cache:
        stats = gen.run(ranks.shard(items), cache)
        ranks.wait()
        if not ranks.is_main:
            return 0
        out_rows = gen.collect(items, cache)
    failures += stats["failures"]
    write_outputs(run_args.out, out_rows, failures)
    report(
        args,
        {
            "out": run_args.out,
            "rows": len(out_rows),
            "hit_limit": sum(r["hit_limit"] for r in out_rows),
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
