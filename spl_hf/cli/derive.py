"""`spl-hf derive`: build an SPL dataset folder from recorded attribute assignments."""

from __future__ import annotations

import argparse
import json


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str) -> None:
    from spl_hf.build import SPLBuildConfig
    from spl_hf.configs import JsonArgs, add_config_parser

    p = add_config_parser(
        sub,
        name,
        (SPLBuildConfig, JsonArgs),
        help=help_text,
        description="Form every candidate pair per prompt, derive labels with the rule base and write "
        "a Hub-layout dataset folder (configs 'preferences' and 'derivations', one split per source). "
        "Settings may also come from a YAML file of these settings (--config F.yaml); the recipes in "
        "recipes/spl/ are release recipes (spl-hf release spl).",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from spl_hf.build import build_spl
    from spl_hf.configs import configs_from_args

    cfg, js = configs_from_args(args)
    result = build_spl(cfg)
    if js.json:
        print(json.dumps(result.summary(), indent=2))
    else:
        print(f"wrote {result.path}: {result.total} pairs, {result.labeled} labeled")
    return 0
