"""`spl-hf derive`: the documented alias of `spl-hf build spl` (see :mod:`spl_hf.cli.build`)."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str, action: str | None = None) -> None:
    from spl_hf.cli.build import add_spl_parser

    add_spl_parser(sub, name, help_text)
