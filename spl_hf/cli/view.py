"""`spl-hf view`: browse a release in a web page (card, figures, rows, explanations) on 127.0.0.1."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str, action: str | None = None) -> None:
    from spl_hf.configs import RevisionArgs, add_config_parser
    from spl_hf.view import ViewArgs

    p = add_config_parser(
        sub,
        name,
        (ViewArgs, RevisionArgs),
        help=help_text,
        description="Serve a release (a folder, or a Hub dataset at --revision) as a web page: its card, the "
        "judge-quality and composition figures, the rows with paging, filters (tenet or topic, source, "
        "score range, label) and text search, and the explanation of any row (click it, or open "
        "?row=ID). Rows are filtered and paged in Arrow. Needs the [viewer] extra (gradio).",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from spl_hf.configs import configs_from_args
    from spl_hf.view import serve

    view, rev = configs_from_args(args)
    serve(view, rev.revision)
    return 0
