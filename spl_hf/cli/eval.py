"""``spl-hf eval``: refusal evaluation of a model (or a trained run) and the at-limit table."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from spl_hf.errors import SplHfError

# (action, help, description); each action's settings are read only when it is the one named.
ACTIONS: tuple[tuple[str, str, str], ...] = (
    (
        "refusal",
        "greedy responses to prompt sets, scored by a refusal matcher",
        "Generate greedy responses to each prompt set and score them with a named refusal matcher. "
        "Writes <output_dir>/<prompt_set>/{responses.jsonl,metrics.json}; with --run and no --output_dir, "
        "<run>/eval/<prompt_set>/. --revision pins the sets read from the Hub. Results are cached "
        "(<output_dir>/results): a killed run resumes, a rerun (with --overwrite) computes nothing.",
    ),
    (
        "classify",
        "label saved responses with a model-based refusal classifier; agreement with the matcher",
        "Label each response of an `eval refusal` responses.jsonl as full_compliance, full_refusal or "
        "partial_refusal by constrained choice (letter probabilities), and report agreement with the "
        "string matcher's verdicts stored in the file. Writes the labels to --output_dir (.jsonl or "
        ".parquet). Cached: a rerun computes nothing.",
    ),
    (
        "at-limit",
        "responses reaching the token limit per condition and seed (Table XIV)",
        "Read <runs>/<condition>/seed<k>/eval/<prompt_set>/metrics.json and count at-limit responses.",
    ),
)


def _classes(name: str) -> tuple[tuple[type, ...], Any]:
    from spl_hf.configs import JsonArgs, OutputArgs, RevisionArgs

    if name == "at-limit":
        from spl_hf.evaluation import AtLimitArgs

        return (AtLimitArgs, JsonArgs), run_at_limit
    from spl_hf.backends import ModelArgs, RunArgs
    from spl_hf.evaluation import ClassifyArgs, EvalConfig, RefusalEvalArgs

    if name == "classify":
        return (ClassifyArgs, ModelArgs, RunArgs, OutputArgs, JsonArgs), run_classify
    return (RefusalEvalArgs, EvalConfig, ModelArgs, RevisionArgs, OutputArgs, JsonArgs), run_refusal


def add_parser(
    subparsers: argparse._SubParsersAction, name: str, help_text: str, action: str | None = None
) -> None:
    from spl_hf.configs import add_config_parser

    p = subparsers.add_parser(name, help=help_text, description="Refusal evaluation of policies.")
    sub = p.add_subparsers(dest="eval_command", metavar="ACTION")
    for act, help_line, description in ACTIONS:
        if action is not None and act != action:
            sub.add_parser(act, help=help_line)  # listed; configured only when it runs
            continue
        classes, func = _classes(act)
        add_config_parser(sub, act, classes, help=help_line, description=description).set_defaults(func=func)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def run_refusal(args: argparse.Namespace) -> int:
    from spl_hf.configs import configs_from_args
    from spl_hf.evaluation import (
        CACHE,
        SAMPLE,
        EvalTarget,
        evaluate_sets,
        load_prompt_set,
        parse_prompt_sets,
        plan_outputs,
        read_run,
    )

    task, config, m, rev, output, js = configs_from_args(args)
    run = read_run(task.run) if task.run else None
    model = m.model if m.model is not None else (run.model_name_or_path if run else None)
    adapter = str(run.path) if run else task.adapter
    if run and m.model is not None and m.model != run.model_name_or_path:
        raise SplHfError(
            f"--model {m.model!r} differs from the run's base model {run.model_name_or_path!r} ({task.run}/run.json)"
        )
    out = output.output_dir or (str(run.eval_dir) if run else None)
    if out is None:
        raise SplHfError("--output_dir is required unless --run is given")
    sets = parse_prompt_sets(task.prompts, SAMPLE if task.samples else None)
    local_inputs = [loc for _, loc in sets if loc and loc != SAMPLE and Path(loc).exists()]
    folders = plan_outputs(out, [n for n, _ in sets], output.overwrite, [adapter, *local_inputs])
    prompt_sets = [load_prompt_set(n, loc, rev.revision, task.limit) for n, loc in sets]

    from spl_hf.evaluation import load_policy

    backend = load_policy(m.backend, model, adapter, threads=m.threads, max_length=m.max_length)
    if run:
        run.check_base(backend.info.revision)
    target = EvalTarget(model=model or "embedded", adapter=adapter, run=run)
    summaries = evaluate_sets(backend, prompt_sets, folders, config, target, task.cache or Path(out) / CACHE)
    _report(
        js.json,
        {
            "out": out,
            "model_id": backend.info.model_id,
            "model_revision": backend.info.revision,
            "adapter": adapter,
            "sets": summaries,
        },
    )
    return 0


def run_classify(args: argparse.Namespace) -> int:
    from spl_hf.backends import load_backend
    from spl_hf.cli._backend_args import prepare_run, write_outputs
    from spl_hf.configs import configs_from_args
    from spl_hf.evaluation import classify_responses
    from spl_hf.jsonl import read_rows

    task, m, run_args, output, js = configs_from_args(args)
    out, store = prepare_run(run_args, output, [task.responses])
    rows = read_rows(task.responses, run_args.limit)
    backend = load_backend(m)
    summary = classify_responses(backend, rows, store, task.progress, task.responses)
    write_outputs(out, summary.pop("rows"), summary["failures"])
    summary.update(out=out, model_id=backend.info.model_id, model_revision=backend.info.revision)
    if js.json:
        print(json.dumps(summary, indent=2, sort_keys=True))
        return 0
    print(
        f"classes: {summary['classes']} (computed {summary['computed']}, cached {summary['cached']}, "
        f"failed {len(summary['failures'])}) -> {out}"
    )
    ag = summary["agreement"]
    if ag:
        kappa = "undefined" if ag["cohen_kappa"] is None else f"{ag['cohen_kappa']:.3f}"
        print(
            f"agreement with the string matcher: {ag['n_agree']}/{ag['n']} = {100 * ag['rate']:.1f}%, "
            f"Cohen's kappa {kappa}; confusion (matcher rows, classifier columns): {ag['confusion']}"
        )
    for f in summary["failures"][:20]:
        print(f"  failed: {f}", file=sys.stderr)
    return 0


def run_at_limit(args: argparse.Namespace) -> int:
    from spl_hf.evaluation import at_limit_table, format_at_limit

    table = at_limit_table(args.runs)  # AtLimitArgs.runs
    if args.json:
        print(json.dumps(table, indent=2, sort_keys=True))
    else:
        print(format_at_limit(table))
    return 0


def _report(as_json: bool, summary: dict[str, Any]) -> None:
    if as_json:
        print(json.dumps(summary, indent=2, sort_keys=True))
        return
    print(
        f"model: {summary['model_id']} ({summary['model_revision']})"
        + (f" + adapter {summary['adapter']}" if summary["adapter"] else "")
    )
    for s in summary["sets"]:
        print(
            f"{s['prompt_set']}: refusal {s['n_refusals']}/{s['n']} = {100 * s['refusal_rate']:.1f}% "
            f"[{s['matcher']}], at limit {s['at_limit']}, computed {s['computed']}, cached {s['cached']}, "
            f"failed {s['failed']} -> {s['out']}"
        )
        if s["failed"]:
            print(f"  {s['failed']} prompt(s) failed; see {s['out']}/failures.jsonl", file=sys.stderr)
