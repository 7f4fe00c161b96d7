"""Recipes of the release builders: config dataclasses parsed by TRL's parser.

``--config recipe.yaml`` sets the defaults, command-line flags override them, and keys that no
dataclass takes fail — the same rules as ``train.py``.
"""

from __future__ import annotations

from collections.abc import Sequence


def parse(classes: Sequence[type], argv: list[str] | None = None) -> tuple:
    from trl import TrlParser

    try:
        return tuple(TrlParser(list(classes)).parse_args_and_config(argv))
    except SystemExit as exc:  # argparse's own usage errors
        if exc.code not in (0, None):
            raise ValueError("invalid arguments (see --help)") from None
        raise
