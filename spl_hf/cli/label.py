"""``spl-hf label``: SPL attributes (constrained or json mode) or verdicts for prompts and responses."""

from __future__ import annotations

import argparse

from spl_hf.cli._backend_args import add_model_args, add_run_args, load_backend, report, write_outputs


def add_parser(subparsers: argparse._SubParsersAction, name: str, help_text: str) -> None:
    p = subparsers.add_parser(
        name,
        help=help_text,
        description=(
            "Label items with an LM. Items are rows with prompt_id and prompt (messages) and either "
            "response (+ response_id) or response_a/response_b (unified pair rows). --task attributes "
            "labels prompt attributes once per distinct prompt and response attributes per response; "
            "--task verdict picks one of the rule base's verdicts per response (the paper's judge baseline)."
        ),
    )
    p.add_argument("--items", required=True, help="item or unified pair rows (.parquet or .jsonl)")
    p.add_argument("--task", choices=("attributes", "verdict"), default="attributes")
    p.add_argument("--mode", choices=("constrained", "json"), default="constrained", help="attributes only")
    p.add_argument("--schema", default=None, help="attribute schema YAML (default: the built-in SPL schema)")
    p.add_argument("--max-new-tokens", type=int, default=160, help="json mode generation limit")
    p.add_argument(
        "--pair-labels", default=None, help="verdict task on pair rows: also write pair labels here"
    )
    add_model_args(p)
    add_run_args(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:

    from spl_hf.backends.cache import ResultCache
    from spl_hf.backends.io import read_rows, write_rows
    from spl_hf.backends.labeler import AttributeLabeler, LabelerConfig, items_from_rows
    from spl_hf.backends.parallel import Ranks
    from spl_hf.backends.verdict import VerdictJudge
    from spl_hf.schema import default_schema, load_schema

    ranks = Ranks()
    rows = read_rows(args.items, args.limit)
    items, failures = items_from_rows(rows)
    backend = load_backend(args)
    worker: AttributeLabeler | VerdictJudge
    if args.task == "attributes":
        schema = load_schema(args.schema) if args.schema else default_schema()
        config = LabelerConfig(
            mode=args.mode, max_new_tokens=args.max_new_tokens, progress=not args.no_progress
        )
        worker = AttributeLabeler(backend, schema, config)
    else:
        worker = VerdictJudge(backend, progress=not args.no_progress)
    with ResultCache(args.cache) as cache:
        stats = worker.run(ranks.shard(items), cache)
        ranks.wait()
        if not ranks.is_main:
            return 0
        out_rows = worker.collect(items, cache)
    failures += stats["failures"]
    write_outputs(args.out, out_rows, failures)
    summary = {
        "out": args.out,
        "task": args.task,
        "rows": len(out_rows),
        "computed": stats["computed"],
        "cached": stats["cached"],
        "failed": len(failures),
        "failures": failures,
        "model_id": backend.info.model_id,
        "model_revision": backend.info.revision,
        "template_hash": worker.template_hash,
    }
    if args.task == "attributes":
        summary["parse_status"] = {
            s: sum(r["status"] == s for r in out_rows) for s in sorted({r["status"] for r in out_rows})
        }
    if args.pair_labels and isinstance(worker, VerdictJudge):
        labels = worker.pair_labels([r for r in rows if "response_a" in r], out_rows)
        write_rows(args.pair_labels, labels)
        summary["pair_labels"] = len(labels)
    report(args, summary)
    return 0
