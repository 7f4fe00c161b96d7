"""`spl-hf derive`: build an SPL dataset folder from recorded attribute assignments."""

from __future__ import annotations

import argparse
import json


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str) -> None:
    p = sub.add_parser(
        name,
        help=help_text,
        description="Form every candidate pair per prompt, derive labels with the rule base and write "
        "a Hub-layout dataset folder (configs 'preferences' and 'derivations', one split per source). "
        "Options may also come from a YAML recipe given with --config.",
    )
    p.add_argument("--config", help="YAML recipe with SPLBuildConfig fields (unknown keys are rejected)")
    p.add_argument("--prompts", help="prompt records (JSON Lines); default: the shipped sample")
    p.add_argument("--candidates", help="candidate records (JSON Lines); default: the shipped sample")
    p.add_argument("--rulebase", help="rule base YAML; default: the packaged rule base")
    p.add_argument("--margin", type=int, help="minimum rank difference for a label (default 1)")
    p.add_argument("--out", dest="output_dir", help="output folder (default out/spl)")
    p.add_argument("--json", action="store_true", help="print the build summary as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from spl_hf.build import SPLBuildConfig, build_spl
    from spl_hf.configs import load_config

    overrides = {k: getattr(args, k) for k in ("prompts", "candidates", "rulebase", "margin", "output_dir")}
    cfg = load_config(SPLBuildConfig, args.config, {k: v for k, v in overrides.items() if v is not None})
    result = build_spl(cfg)
    if args.json:
        print(json.dumps(result.summary(), indent=2))
    else:
        print(f"wrote {result.path}: {result.total} pairs, {result.labeled} labeled")
    return 0
