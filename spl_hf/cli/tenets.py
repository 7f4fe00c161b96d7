"""`spl-hf tenets`: list the tenets; ``tenets build`` is the alias of `spl-hf build tenets`."""

from __future__ import annotations

import argparse
import json


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str, action: str | None = None) -> None:
    from spl_hf.cli.build import add_tenets_parser
    from spl_hf.configs import JsonArgs, add_config_parser

    p = sub.add_parser(name, help=help_text, description=help_text)
    tsub = p.add_subparsers(dest="tenets_command", metavar="ACTION", required=True)
    ls = add_config_parser(
        tsub, "list", (JsonArgs,), help="the built-in tenets with their statements", description=help_text
    )
    ls.set_defaults(func=run_list)
    add_tenets_parser(
        tsub, "build", "the same as `spl-hf build tenets` (assign and write the dataset folder)"
    )


def run_list(args: argparse.Namespace) -> int:
    from spl_hf.tenets import default_tenets

    tenets = default_tenets().tenets
    if args.json:  # the one field of JsonArgs
        print(json.dumps({t.name: t.statement for t in tenets}, indent=2))
    else:
        for t in tenets:
            print(f"{t.name}: {t.statement}")
    return 0
