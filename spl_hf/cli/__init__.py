"""The `spl-hf` console script.

Each subcommand lives in its own module under ``spl_hf.cli`` exposing
``add_parser(subparsers)``; modules are imported lazily-cheap (no torch at import
time) so that ``spl-hf --help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# (subcommand, module, one-line help). Order is the order shown by --help.
COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("rules", "spl_hf.cli.rules", "inspect and check a rule base (coverage, overlaps, conflicts)"),
    ("derive", "spl_hf.cli.derive", "derive SPL preference pairs from recorded attribute assignments"),
    ("audit", "spl_hf.cli.audit", "recompute every label of a built dataset from its recorded derivation"),
    ("tables", "spl_hf.cli.tables", "composition tables of a built SPL dataset"),
    ("sources", "spl_hf.cli.sources", "read source preference pools into unified pair rows"),
    ("assign", "spl_hf.cli.assign", "min-cost-flow assignment of judged pairs to tenets"),
    ("tenets", "spl_hf.cli.tenets", "list tenets; build per-tenet DPO datasets from judged pairs"),
    ("model", "spl_hf.cli.model", "prepare the embedded model cache and show model info"),
    ("label", "spl_hf.cli.label", "assign SPL attributes with an LM labeler"),
    ("judge", "spl_hf.cli.judge", "score response pairs per tenet with an LM judge (both orderings)"),
    ("generate", "spl_hf.cli.generate", "generate candidate responses per prompt under named instructions"),
    ("train", "spl_hf.cli.train", "DPO + LoRA training: seed x condition sweeps of train.py"),
    ("demo", "spl_hf.cli.demo", "run the main job on the embedded defaults, writing under out/demo"),
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="spl-hf", description="Auditable preference supervision with recorded derivations."
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module_name, help_text in COMMANDS:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            continue  # capability not installed in this checkout
        module.add_parser(sub, name, help_text)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except (ValueError, FileNotFoundError, KeyError) as exc:
        # User-facing errors carry the file/row/field; print them without a traceback.
        print(f"spl-hf {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
