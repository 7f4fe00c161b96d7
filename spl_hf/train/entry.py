"""Command-line entry shared by ``train.py`` and ``python -m spl_hf.train``."""

from __future__ import annotations

import sys
from collections.abc import Sequence


def cli(argv: Sequence[str] | None = None) -> int:
    """Parse, train; bad input is one line on stderr and exit status 2 (like ``spl-hf``). Only the
    user errors of :data:`spl_hf.errors.USER_ERRORS` are; any other exception is a bug and keeps its
    traceback (exit 1)."""
    from spl_hf.errors import USER_ERRORS
    from spl_hf.train.args import parse_args
    from spl_hf.train.group import end_rank
    from spl_hf.train.run import main

    args = list(sys.argv[1:] if argv is None else argv)
    try:
        main(*parse_args(args), argv=args)
    except USER_ERRORS as exc:
        print(f"train.py: error: {exc}", file=sys.stderr)
        return 2
    return end_rank(0)
