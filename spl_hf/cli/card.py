"""`spl-hf card`: render a build's dataset card again from its own files, without rebuilding."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str) -> None:
    p = sub.add_parser(
        name,
        help=help_text,
        description="Re-render README.md of a build folder from its card.json and data files (e.g. after "
        "upgrading spl_hf or to set the repo id of the loading example) and update its MANIFEST.sha256 line.",
    )
    p.add_argument("path", help="dataset folder written by an spl-hf build")
    p.add_argument("--repo-id", default=None, help="repo id for the card's loading example")
    p.add_argument("--template", default=None, help="Jinja template file (default: the one the build used)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from spl_hf.hub.card import regenerate_card

    text = regenerate_card(args.path, repo_id=args.repo_id, template=args.template)
    print(f"wrote {args.path}/README.md ({len(text.encode())} bytes)")
    return 0
