"""`spl-hf build spl|tenets`: a dataset folder from recorded inputs, SPL pairs or per-tenet DPO.

``spl-hf derive`` is an alias of ``build spl`` and ``spl-hf tenets build`` of ``build tenets``; both
are kept so that scripts written for them keep working.
"""

from __future__ import annotations

import argparse
import json

SPL_DESCRIPTION = (
    "Form every candidate pair per prompt, derive labels with the rule base and write "
    "a Hub-layout dataset folder (configs 'preferences' and 'derivations', one split per source). "
    "Settings may also come from a YAML file of these settings (--config F.yaml); the recipes in "
    "recipes/spl/ are release recipes (spl-hf release spl)."
)
TENETS_DESCRIPTION = (
    "Min-cost-flow assignment of judged pairs to tenets, then a Hub-layout folder: config "
    "'all' (default), one config per kept tenet split by source, 'judge_scores', the card and the "
    "assignment certificate. Settings may come from a YAML file of these settings (--config F.yaml); the "
    "recipes in recipes/tenets/ are release recipes (spl-hf release tenets)."
)


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str, action: str | None = None) -> None:
    p = sub.add_parser(name, help=help_text, description=help_text)
    kinds = p.add_subparsers(dest="build_command", metavar="KIND", required=True)
    add_spl_parser(kinds, "spl", "SPL preference pairs derived from recorded attribute assignments")
    add_tenets_parser(kinds, "tenets", "assign judged pairs to tenets and write the per-tenet dataset folder")


def add_spl_parser(sub: argparse._SubParsersAction, name: str, help_text: str) -> argparse.ArgumentParser:
    from spl_hf.build import SPLBuildConfig
    from spl_hf.configs import JsonArgs, add_config_parser

    p = add_config_parser(sub, name, (SPLBuildConfig, JsonArgs), help=help_text, description=SPL_DESCRIPTION)
    p.set_defaults(func=run_spl)
    return p


def add_tenets_parser(sub: argparse._SubParsersAction, name: str, help_text: str) -> argparse.ArgumentParser:
    from spl_hf.build import TenetBuildConfig
    from spl_hf.configs import JsonArgs, add_config_parser

    p = add_config_parser(
        sub, name, (TenetBuildConfig, JsonArgs), help=help_text, description=TENETS_DESCRIPTION
    )
    p.set_defaults(func=run_tenets)
    return p


def run_spl(args: argparse.Namespace) -> int:
    from spl_hf.build import build_spl
    from spl_hf.configs import configs_from_args

    cfg, js = configs_from_args(args)
    result = build_spl(cfg)
    if js.json:
        print(json.dumps(result.summary(), indent=2))
    else:
        print(f"wrote {result.path}: {result.total} pairs, {result.labeled} labeled")
    return 0


def run_tenets(args: argparse.Namespace) -> int:
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
