"""Command-line entry shared by ``train.py`` and ``python -m spl_hf.train``."""

from __future__ import annotations

import sys
from collections.abc import Sequence


def cli(argv: Sequence[str] | None = None) -> int:
    """Parse, train; bad input is one line on stderr and exit status 2 (like ``spl-hf``)."""
    from spl_hf.train.args import parse_args
    from spl_hf.train.run import main

    args = list(sys.argv[1:] if argv is None else argv)
    try:
        main(*parse_args(args), argv=args)
    except (ValueError, FileNotFoundError) as exc:
        print(f"train.py: error: {exc}", file=sys.stderr)
        return 2
    return 0
