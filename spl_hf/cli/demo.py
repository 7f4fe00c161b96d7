"""`spl-hf demo`: the main job on the embedded defaults, everything under one output folder."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text, description=help_text)
    p.add_argument("--out", default="out/demo", help="output folder (default out/demo)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from spl_hf.demo import run_demo

    return run_demo(args.out)
