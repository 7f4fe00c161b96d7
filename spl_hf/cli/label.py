"""``spl-hf label``: SPL attributes (constrained or json mode) or verdicts for prompts and responses."""

from __future__ import annotations

import argparse

from spl_hf.backends import LabelInputs, load_backend
from spl_hf.cli._backend_args import add_backend_parser, prepare_run, report, write_outputs
from spl_hf.errors import SplHfError


def add_parser(subparsers: argparse._SubParsersAction, name: str, help_text: str) -> None:
    from spl_hf.backends import LabelerConfig  # no torch: safe for --help

    p = add_backend_parser(
        subparsers,
        name,
        LabelInputs,
        LabelerConfig,
        help=help_text,
        description=(
            "Label items with an LM. Items are rows with prompt_id and prompt (messages) and either "
            "response (+ response_id) or response_a/response_b (unified pair rows). --task attributes "
            "labels prompt attributes once per distinct prompt and response attributes per response "
            "(--mode, --max_new_tokens); --task verdict picks one of the rule base's verdicts per "
            "response (the paper's judge baseline)."
        ),
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:

    from spl_hf.backends import (
        AttributeLabeler,
        Ranks,
        ResultCache,
        VerdictJudge,
        items_from_rows,
        write_rows,
    )
    from spl_hf.configs import configs_from_args
    from spl_hf.jsonl import read_rows
    from spl_hf.schema import default_schema, load_schema

    task, config, model, run_args, output, js = configs_from_args(args)
    out = prepare_run(run_args, output, [task.items, task.schema], extra_outputs=(task.pair_labels,))
    ranks = Ranks()
    rows = read_rows(task.items, run_args.limit)
    items, failures = items_from_rows(rows)
    if rows and not items:
        raise SplHfError(
            f"{task.items}: none of the {len(rows)} rows is a label item (prompt_id, prompt, and response "
            f"or response_a/response_b); first: {failures[0].get('reason')}"
        )
    schema = load_schema(task.schema) if task.schema else default_schema()
    backend = load_backend(model)
    worker: AttributeLabeler | VerdictJudge
    if task.task == "attributes":
        worker = AttributeLabeler(backend, schema, config)
    else:
        worker = VerdictJudge(backend, progress=config.progress)
    with ResultCache(run_args.cache) as cache:
        stats = worker.run(ranks.shard(items), cache)
        ranks.wait()
        if not ranks.is_main:
            return 0
        out_rows = worker.collect(items, cache)
    failures += stats["failures"]
    write_outputs(out, out_rows, failures)
    summary = {
        "out": out,
        "task": task.task,
        "rows": len(out_rows),
        "computed": stats["computed"],
        "cached": stats["cached"],
        "failed": len(failures),
        "failures": failures,
        "model_id": backend.info.model_id,
        "model_revision": backend.info.revision,
        "template_hash": worker.template_hash,
    }
    if task.task == "attributes":
        summary["parse_status"] = {
            s: sum(r["status"] == s for r in out_rows) for s in sorted({r["status"] for r in out_rows})
        }
    if task.pair_labels and isinstance(worker, VerdictJudge):
        labels = worker.pair_labels([r for r in rows if "response_a" in r], out_rows)
        write_rows(task.pair_labels, labels)
        summary["pair_labels"] = len(labels)
    report(js.json, summary)
    return 0
