"""`spl-hf card`: render a build's dataset card again from its own files, without rebuilding."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str, action: str | None = None) -> None:
    from spl_hf.configs import add_config_parser
    from spl_hf.hub import CardArgs

    p = add_config_parser(
        sub,
        name,
        (CardArgs,),
        help=help_text,
        description="Re-render README.md of a build folder from its card.json and data files (e.g. after "
        "upgrading spl_hf or to set the repo id of the loading example) and update its MANIFEST.sha256 line.",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from spl_hf.configs import configs_from_args
    from spl_hf.dataset import regenerate_card

    (card,) = configs_from_args(args)
    text = regenerate_card(card.path, repo_id=card.repo_id, template=card.template)
    print(f"wrote {card.path}/README.md ({len(text.encode())} bytes)")
    return 0
