"""``spl-hf agreement``: model attribute labels against a human rater panel."""

from __future__ import annotations

import argparse
import json


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str) -> None:
    p = sub.add_parser(
        name,
        help=help_text,
        description="Per attribute: the panel's plurality reference (ties detected), conditional and "
        "coverage-aware accuracy with their counts, Cohen's kappa against the reference, F1 and errors for "
        "boolean attributes, Fleiss' kappa among the raters, and the confusion matrix of category attributes.",
    )
    p.add_argument(
        "--panel", required=True, help="rater labels (.jsonl/.parquet): item_id, rater_id, attribute, label"
    )
    p.add_argument(
        "--labels",
        required=True,
        help="model labels (.jsonl/.parquet): item_id, attribute, label (null = parse failure)",
    )
    p.add_argument("--schema", default=None, help="attribute schema YAML (default: the built-in SPL schema)")
    p.add_argument(
        "--figure", default=None, help="also draw Figure 3 (accuracies and kappas) to this PNG file"
    )
    p.add_argument("--overwrite", action="store_true", help="replace an existing --figure file")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from spl_hf.agreement import panel_agreement, read_model_labels, read_panel
    from spl_hf.schema import default_schema, load_schema

    if args.figure:
        from spl_hf.outputs import guard_file

        guard_file(args.figure, overwrite=args.overwrite, inputs=(args.panel, args.labels))
    schema = load_schema(args.schema) if args.schema else default_schema()
    report = panel_agreement(
        read_panel(args.panel, schema),
        read_model_labels(args.labels, schema),
        schema,
        args.panel,
        args.labels,
    )
    if args.figure:
        from spl_hf.agreement.figure import figure_agreement
        from spl_hf.report.figures import save_png

        save_png(figure_agreement(report), args.figure)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        print(report.to_markdown(), end="")
    return 0
