"""Lettered options: the constrained-choice format shared by the labeler and the verdict judge.

Options are shown as "A. value: meaning" and answered with one letter, so every option is one
single-token label no matter how many tokens its name has (``benign`` vs ``chemistry_biology``);
the model's next-token probabilities over the letters are the option probabilities.
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence

from spl_hf.errors import SplHfError

LETTERS = tuple(string.ascii_uppercase)


def option_keys(n: int) -> tuple[str, ...]:
    if n > len(LETTERS):
        raise SplHfError(f"{n} options: at most {len(LETTERS)} can be offered as single letters")
    return LETTERS[:n]


def option_block(values: Sequence[str], meanings: Mapping[str, str] | None = None) -> str:
    meanings = meanings or {}
    lines = []
    for key, value in zip(option_keys(len(values)), values, strict=True):
        meaning = meanings.get(value)
        lines.append(f"{key}. {value}: {meaning}" if meaning else f"{key}. {value}")
    return "\n".join(lines)


def argmax_option(values: Sequence[str], probs: Sequence[float]) -> str:
    """Most probable option; ties go to the earlier option so results are deterministic."""
    best = max(range(len(values)), key=lambda i: (probs[i], -i))
    return values[best]
