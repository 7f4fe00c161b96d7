"""`spl-hf tenets`: list the tenets, and build per-tenet DPO datasets from judged pairs."""

from __future__ import annotations

import argparse
import json


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str) -> None:
    from spl_hf.build import TenetBuildConfig
    from spl_hf.configs import JsonArgs, add_config_parser

    p = sub.add_parser(name, help=help_text, description=help_text)
    tsub = p.add_subparsers(dest="tenets_command", metavar="ACTION", required=True)
    ls = add_config_parser(
        tsub, "list", (JsonArgs,), help="the built-in tenets with their statements", description=help_text
    )
    ls.set_defaults(func=run_list)
    b = add_config_parser(
        tsub,
        "build",
        (TenetBuildConfig, JsonArgs),
        help="assign judged pairs to tenets and write the per-tenet dataset folder",
        description="Min-cost-flow assignment of judged pairs to tenets, then a Hub-layout folder: config "
        "'all' (default), one config per kept tenet split by source, 'judge_scores', the card and the "
        "assignment certificate. Settings may come from a YAML file of these settings (--config F.yaml); the "
        "recipes in recipes/tenets/ are release recipes (spl-hf release tenets).",
    )
    b.set_defaults(func=run_build)


def run_list(args: argparse.Namespace) -> int:
    from spl_hf.tenets import default_tenets

    tenets = default_tenets().tenets
    if args.json:  # the one field of JsonArgs
        print(json.dumps({t.name: t.statement for t in tenets}, indent=2))
    else:
        for t in tenets:
            print(f"{t.name}: {t.statement}")
    return 0


def run_build(args: argparse.Namespace) -> int:
    from spl_hf.build import build_tenets
    from spl_hf.configs import configs_from_args

    cfg, js = configs_from_args(args)
    result = build_tenets(cfg)
    if js.json:
        print(json.dumps(result.summary(), indent=2))
    else:
        print(
            f"wrote {result.path}: {result.rows} rows in {len(result.tenets_kept)} tenets; "
            f"certificate {'verified' if result.certificate_ok else 'FAILED'}"
        )
    return 0 if result.certificate_ok else 1
