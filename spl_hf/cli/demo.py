"""`spl-hf demo`: the main job on the embedded defaults, everything under one output folder."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

DEMO_KIND = "demo"


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text, description=help_text)
    p.add_argument(
        "--out", default="out/demo", help="output folder: new, empty, or an earlier demo's (default out/demo)"
    )
    p.set_defaults(func=run)


def _earlier_demo(out: Path) -> bool:
    from spl_hf.outputs import MARKER

    try:
        return json.loads((out / MARKER).read_text(encoding="utf-8")).get("kind") == DEMO_KIND
    except (OSError, ValueError):
        return False


def run(args: argparse.Namespace) -> int:
    from spl_hf.outputs import guard_dir, mark_output, refuse_dangerous

    out = Path(args.out)
    # A rerun resumes in the demo's own folder (its caches make it fast); any other folder must be
    # new or empty, so the demo never writes among a user's files.
    if _earlier_demo(out):
        refuse_dangerous(out)
    else:
        guard_dir(out)
    mark_output(out, DEMO_KIND)

    from spl_hf.demo import run_demo

    return run_demo(str(out))
