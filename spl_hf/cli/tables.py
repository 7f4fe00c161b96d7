"""`spl-hf tables`: composition tables (verdict pairs, applied rules, topics) of a built dataset."""

from __future__ import annotations

import argparse
import json


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text, description=help_text)
    p.add_argument("path", help="dataset folder or Hub repo id")
    p.add_argument("--config", default="derivations", help="config to read (default: derivations)")
    p.add_argument("--json", action="store_true", help="print JSON instead of Markdown")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import pyarrow as pa

    from spl_hf.audit.load import load_built
    from spl_hf.audit.tables import composition_tables

    splits = load_built(args.path, args.config)
    if any("derivation" not in s.table.column_names for s in splits):
        raise ValueError(
            f"{args.path}: config {args.config!r} holds no rule derivation (for the verdict judge's "
            f"labels run `spl-hf report judge {args.path}`)"
        )
    tables = composition_tables(pa.concat_tables([s.table for s in splits]))
    print(json.dumps(tables.to_dict(), indent=2) if args.json else tables.to_markdown(), end="")
    return 0
