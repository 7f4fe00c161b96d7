"""``spl-hf generate``: K candidate responses per prompt under named instructions."""

from __future__ import annotations

import argparse

from spl_hf.backends import GenerateInputs
from spl_hf.cli._backend_args import add_backend_parser, prepare_run, report, write_outputs
from spl_hf.errors import SplHfError


def add_parser(
    subparsers: argparse._SubParsersAction, name: str, help_text: str, action: str | None = None
) -> None:
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
    from spl_hf.backends import generate_items, generate_stage, prompts_from_rows, run_stage
    from spl_hf.configs import configs_from_args
    from spl_hf.jsonl import read_rows

    task, config, model, run_args, executor, output, js = configs_from_args(args)
    out, store = prepare_run(run_args, output, [task.prompts], executor=executor)
    rows = read_rows(task.prompts, run_args.limit)
    prompts, failures = prompts_from_rows(rows)
    if rows and not prompts:
        raise SplHfError(
            f"{task.prompts}: none of the {len(rows)} rows is a prompt (prompt_id and prompt messages); "
            f"first: {failures[0]['reason']}"
        )
    result = run_stage(generate_stage(model, config), generate_items(prompts, config), store, executor)
    out_rows = result.rows
    failures += result.failures
    write_outputs(out, out_rows, failures)
    first = out_rows[0] if out_rows else {}
    report(
        js.json,
        {
            "out": out,
            "rows": len(out_rows),
            "hit_limit": sum(r["hit_limit"] for r in out_rows),
            "computed": result.computed,
            "cached": result.cached,
            "failed": len(failures),
            "failures": failures,
            "model_id": first.get("model_id"),
            "model_revision": first.get("model_revision"),
            "template_hash": first.get("template_hash"),
        },
    )
    return 0
