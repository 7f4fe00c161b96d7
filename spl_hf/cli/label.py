"""``spl-hf label``: SPL attributes (constrained or json mode) or verdicts for prompts and responses."""

from __future__ import annotations

import argparse

from spl_hf.backends import LabelInputs
from spl_hf.cli._backend_args import add_backend_parser, prepare_run, report, write_outputs
from spl_hf.errors import SplHfError


def add_parser(
    subparsers: argparse._SubParsersAction, name: str, help_text: str, action: str | None = None
) -> None:
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
        items_from_rows,
        label_stage,
        run_stage,
        verdict_pair_labels,
        verdict_stage,
        write_rows,
    )
    from spl_hf.configs import configs_from_args
    from spl_hf.jsonl import read_rows
    from spl_hf.schema import default_schema, load_schema

    task, config, model, run_args, executor, output, js = configs_from_args(args)
    inputs = [task.items, task.schema]
    out, store = prepare_run(run_args, output, inputs, extra_outputs=(task.pair_labels,), executor=executor)
    rows = read_rows(task.items, run_args.limit)
    items, failures = items_from_rows(rows)
    if rows and not items:
        raise SplHfError(
            f"{task.items}: none of the {len(rows)} rows is a label item (prompt_id, prompt, and response "
            f"or response_a/response_b); first: {failures[0].get('reason')}"
        )
    schema = load_schema(task.schema) if task.schema else default_schema()
    if task.task == "attributes":
        stage = label_stage(model, schema, config)
    else:
        stage = verdict_stage(model, None, config.progress)
        items = [it for it in items if it.scope == "response"]  # a verdict needs a response
    result = run_stage(stage, items, store, executor)
    out_rows = result.rows
    failures += result.failures + result.not_judged
    write_outputs(out, out_rows, failures)
    first = out_rows[0] if out_rows else {}
    summary = {
        "out": out,
        "task": task.task,
        "rows": len(out_rows),
        "computed": result.computed,
        "cached": result.cached,
        "failed": len(failures),
        "failures": failures,
        "model_id": first.get("model_id"),
        "model_revision": first.get("model_revision"),
        "template_hash": first.get("template_hash"),
    }
    if task.task == "attributes":
        summary["parse_status"] = {
            s: sum(r["status"] == s for r in out_rows) for s in sorted({r["status"] for r in out_rows})
        }
    else:
        summary["low_label_mass"] = len(result.not_judged)
    if task.pair_labels and task.task == "verdict":
        labels = verdict_pair_labels(
            [r for r in rows if "response_a" in r], out_rows, stage.settings["ranking"]
        )
        write_rows(task.pair_labels, labels)
        summary["pair_labels"] = len(labels)
    report(js.json, summary)
    return 0
