"""`spl-hf tables`: composition tables (verdict pairs, applied rules, topics) of a built dataset."""

from __future__ import annotations

import argparse
import json

from spl_hf.errors import SplHfError


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str, action: str | None = None) -> None:
    from spl_hf.audit import TablesArgs
    from spl_hf.configs import JsonArgs, add_config_parser

    p = add_config_parser(sub, name, (TablesArgs, JsonArgs), help=help_text, description=help_text)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import pyarrow as pa

    from spl_hf.audit import load_built
    from spl_hf.configs import configs_from_args
    from spl_hf.contract import composition_tables

    t, js = configs_from_args(args)
    splits = load_built(t.path, t.config_name)
    if any("derivation" not in s.table.column_names for s in splits):
        raise SplHfError(
            f"{t.path}: config {t.config_name!r} holds no rule derivation (for the verdict judge's "
            f"labels run `spl-hf report judge {t.path}`)"
        )
    tables = composition_tables(pa.concat_tables([s.table for s in splits]))
    print(json.dumps(tables.to_dict(), indent=2) if js.json else tables.to_markdown(), end="")
    return 0
