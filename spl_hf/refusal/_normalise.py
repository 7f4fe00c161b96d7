"""Text normalisation applied to responses and patterns before matching.

Curly apostrophes and quotes become straight ones (models and published lists mix ``I’m`` and
``I'm``; OR-Bench's own GPT-4 list has both), and leading whitespace is removed (decoders often
emit a leading space or newline). Nothing else changes, so substring matchers see the text as it is.
"""

from __future__ import annotations

# Typographic apostrophes/single quotes seen in model output, mapped to "'".
APOSTROPHES = ("\u2019", "\u2018", "\u02bc", "\u2032", "\uff07")


def normalise(text: str) -> str:
    for a in APOSTROPHES:
        if a in text:
            text = text.replace(a, "'")
    return text.lstrip()
