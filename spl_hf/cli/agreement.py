"""``spl-hf agreement``: model attribute labels against a human rater panel."""

from __future__ import annotations

import argparse
import json


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str, action: str | None = None) -> None:
    from spl_hf.agreement import AgreementArgs
    from spl_hf.configs import JsonArgs, OutputArgs, add_config_parser

    p = add_config_parser(
        sub,
        name,
        (AgreementArgs, OutputArgs, JsonArgs),
        help=help_text,
        description="Per attribute: the panel's plurality reference (ties detected), conditional and "
        "coverage-aware accuracy with their counts, Cohen's kappa against the reference, F1 and errors for "
        "boolean attributes, Fleiss' kappa among the raters, and the confusion matrix of category attributes. "
        "With --output_dir F.png, also draws Figure 3 (accuracies and kappas) to that PNG file.",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from spl_hf.agreement import panel_agreement, read_model_labels, read_panel
    from spl_hf.configs import configs_from_args
    from spl_hf.schema import default_schema, load_schema

    a, output, js = configs_from_args(args)
    figure = output.output_dir  # the PNG of Figure 3, when asked for
    if figure:
        from spl_hf.outputs import guard_file

        guard_file(figure, overwrite=output.overwrite, inputs=(a.panel, a.labels))
    schema = load_schema(a.schema) if a.schema else default_schema()
    report = panel_agreement(
        read_panel(a.panel, schema),
        read_model_labels(a.labels, schema),
        schema,
        a.panel,
        a.labels,
    )
    if figure:
        from spl_hf.agreement import figure_agreement
        from spl_hf.dataset import save_png

        save_png(figure_agreement(report), figure)
    if js.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        print(report.to_markdown(), end="")
    return 0
