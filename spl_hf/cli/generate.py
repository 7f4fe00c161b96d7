"""``spl-hf generate``: K candidate responses per prompt under named instructions."""

from __future__ import annotations

import argparse

from spl_hf.backends import GenerateInputs, load_backend
from spl_hf.cli._backend_args import add_backend_parser, prepare_run, report, write_outputs
from spl_hf.errors import SplHfError


def add_parser(subparsers: argparse._SubParsersAction, name: str, help_text: str) -> None:
    from spl_hf.backends import GenerationConfig  # no torch: safe for --help

    p = add_backend_parser(
        subparsers,
        name,
        GenerateInputs,
        GenerationConfig,
        help=help_text,
        description=(
            "Generate candidates for each distinct prompt (rows with prompt_id and prompt messages) under "
            "each named instruction (spl_hf/data/instructions.yaml or --instructions_file; --instructions "
            "comply refuse). Output rows "
            "(prompt_id, response_id, prompt, response, instruction, limit, hit_limit, seed) can be "
            "labeled with `spl-hf label`."
        ),
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:

    from spl_hf.backends import CandidateGenerator, Ranks, ResultCache, prompts_from_rows
    from spl_hf.configs import configs_from_args
    from spl_hf.jsonl import read_rows

    task, config, model, run_args, output, js = configs_from_args(args)
    out = prepare_run(run_args, output, [task.prompts])
    ranks = Ranks()
    rows = read_rows(task.prompts, run_args.limit)
    prompts, failures = prompts_from_rows(rows)
    if rows and not prompts:
        raise SplHfError(
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
    write_outputs(out, out_rows, failures)
    report(
        js.json,
        {
            "out": out,
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
