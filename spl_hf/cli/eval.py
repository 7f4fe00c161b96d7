"""``spl-hf eval``: refusal evaluation of a model (or a trained run) and the at-limit table."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

MATCHER_IDS = "default, xstest, or_bench_gpt4, or_bench_gpt35, or_bench_claude, or_bench_gemini, or_bench_open, or_bench_qwen, advbench (harmbench)"


def add_parser(subparsers: argparse._SubParsersAction, name: str, help_text: str) -> None:
    p = subparsers.add_parser(name, help=help_text, description="Refusal evaluation of policies.")
    sub = p.add_subparsers(dest="eval_command", metavar="ACTION")
    r = sub.add_parser(
        "refusal",
        help="greedy responses to prompt sets, scored by a refusal matcher",
        description=(
            "Generate greedy responses to each prompt set and score them with a named refusal matcher. "
            "Writes <out>/<prompt_set>/{responses.jsonl,metrics.json}; with --run and no --out, "
            "<run>/eval/<prompt_set>/. Results are cached (<out>/cache.sqlite): a killed run resumes, "
            "a rerun (with --overwrite) computes nothing."
        ),
    )
    r.add_argument(
        "--model", default=None, help="base model: Hub id or local folder (default: embedded SmolLM2-135M)"
    )
    src = r.add_mutually_exclusive_group()
    src.add_argument("--adapter", default=None, help="PEFT LoRA adapter folder to merge into the model")
    src.add_argument(
        "--run", default=None, help="train.py run folder: base model from run.json, adapter at its root"
    )
    r.add_argument(
        "--prompts",
        default="or_bench_hard_1k,or_bench_toxic",
        help="comma-separated prompt sets, each NAME or NAME=FILE|HUB_ID|sample (default: the sets' Hub datasets)",
    )
    r.add_argument(
        "--samples", action="store_true", help="read sets given without a location from the shipped samples"
    )
    r.add_argument("--revision", default=None, help="Hub revision (commit) to pin for sets read from the Hub")
    r.add_argument("--max-new-tokens", type=int, default=200)
    r.add_argument(
        "--batch-size",
        type=int,
        default=8,
        help="prompts generated together (1 = one at a time; with vllm use hundreds: its scheduler batches)",
    )
    r.add_argument("--system-prompt", default=None, help="system message placed before each prompt")
    r.add_argument("--matcher", default="default", help=f"refusal matcher: {MATCHER_IDS}")
    r.add_argument("--out", default=None, help="output folder (required unless --run)")
    r.add_argument("--cache", default=None, help="result cache (default: <out>/cache.sqlite)")
    r.add_argument("--limit", type=int, default=None, help="only the first N prompts of each set")
    r.add_argument(
        "--overwrite", action="store_true", help="replace earlier eval outputs in the same folders"
    )
    r.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    r.add_argument(
        "--max-length", type=int, default=None, help="token limit per input (default: model context)"
    )
    r.add_argument("--backend", choices=("hf", "vllm"), default="hf", help="vllm needs the [vllm] extra")
    r.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    r.add_argument("--json", action="store_true", help="print a JSON summary on stdout")
    r.set_defaults(func=run_refusal)
    c = sub.add_parser(
        "classify",
        help="label saved responses with a model-based refusal classifier; agreement with the matcher",
        description=(
            "Label each response of an `eval refusal` responses.jsonl as full_compliance, full_refusal or "
            "partial_refusal by constrained choice (letter probabilities), and report agreement with the "
            "string matcher's verdicts stored in the file. Cached: a rerun computes nothing."
        ),
    )
    c.add_argument("--responses", required=True, help="responses.jsonl written by `spl-hf eval refusal`")
    c.add_argument("--model", default=None, help="classifier model (default: embedded SmolLM2-135M)")
    c.add_argument("--threads", type=int, default=1)
    c.add_argument("--max-length", type=int, default=None)
    c.add_argument("--backend", choices=("hf", "vllm"), default="hf")
    c.add_argument("--cache", required=True, help="sqlite result cache")
    c.add_argument("--out", required=True, help="output labels (.jsonl or .parquet)")
    c.add_argument("--overwrite", action="store_true", help="replace an existing output file")
    c.add_argument("--no-progress", action="store_true")
    c.add_argument("--json", action="store_true", help="print a JSON summary on stdout")
    c.set_defaults(func=run_classify)
    t = sub.add_parser(
        "at-limit",
        help="responses reaching the token limit per condition and seed (Table XIV)",
        description="Read <runs>/<condition>/seed<k>/eval/<prompt_set>/metrics.json and count at-limit responses.",
    )
    t.add_argument("runs", help="folder of runs laid out as <condition>/seed<k>/")
    t.add_argument("--json", action="store_true", help="print the rows as JSON")
    t.set_defaults(func=run_at_limit)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def run_refusal(args: argparse.Namespace) -> int:
    from spl_hf.evaluation.job import CACHE, EvalTarget, evaluate_sets, plan_outputs
    from spl_hf.evaluation.prompts import SAMPLE, load_prompt_set, parse_prompt_sets
    from spl_hf.evaluation.run_folder import read_run
    from spl_hf.evaluation.runner import EvalConfig

    config = EvalConfig(
        max_new_tokens=args.max_new_tokens,
        batch_size=args.batch_size,
        system_prompt=args.system_prompt,
        matcher=args.matcher,
        progress=not args.no_progress,
    )
    run = read_run(args.run) if args.run else None
    model = args.model if args.model is not None else (run.model_name_or_path if run else None)
    adapter = str(run.path) if run else args.adapter
    if run and args.model is not None and args.model != run.model_name_or_path:
        raise ValueError(
            f"--model {args.model!r} differs from the run's base model {run.model_name_or_path!r} ({args.run}/run.json)"
        )
    out = args.out or (str(run.eval_dir) if run else None)
    if out is None:
        raise ValueError("--out is required unless --run is given")
    sets = parse_prompt_sets(args.prompts, SAMPLE if args.samples else None)
    local_inputs = [loc for _, loc in sets if loc and loc != SAMPLE and Path(loc).exists()]
    folders = plan_outputs(out, [n for n, _ in sets], args.overwrite, [adapter, *local_inputs])
    prompt_sets = [load_prompt_set(n, loc, args.revision, args.limit) for n, loc in sets]

    from spl_hf.evaluation.model import load_policy

    backend = load_policy(args.backend, model, adapter, threads=args.threads, max_length=args.max_length)
    if run:
        run.check_base(backend.info.revision)
    target = EvalTarget(model=model or "embedded", adapter=adapter, run=run)
    summaries = evaluate_sets(backend, prompt_sets, folders, config, target, args.cache or Path(out) / CACHE)
    _report(
        args,
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
    from spl_hf.backends import make_backend
    from spl_hf.backends.cache import ResultCache
    from spl_hf.backends.io import read_rows, write_rows
    from spl_hf.evaluation.classify import classify_responses
    from spl_hf.outputs import guard_file

    guard_file(args.out, overwrite=args.overwrite, inputs=[args.responses, args.cache])
    rows = read_rows(args.responses)
    backend = make_backend(args.backend, args.model, threads=args.threads, max_length=args.max_length)
    with ResultCache(args.cache) as cache:
        summary = classify_responses(backend, rows, cache, not args.no_progress, args.responses)
    write_rows(args.out, summary.pop("rows"))
    summary.update(out=args.out, model_id=backend.info.model_id, model_revision=backend.info.revision)
    if args.json:
        print(json.dumps(summary, indent=2, sort_keys=True))
        return 0
    print(
        f"classes: {summary['classes']} (computed {summary['computed']}, cached {summary['cached']}, "
        f"failed {len(summary['failures'])}) -> {args.out}"
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
    from spl_hf.evaluation.collect import at_limit_table, format_at_limit

    table = at_limit_table(args.runs)
    if args.json:
        print(json.dumps(table, indent=2, sort_keys=True))
    else:
        print(format_at_limit(table))
    return 0


def _report(args: argparse.Namespace, summary: dict[str, Any]) -> None:
    if args.json:
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
