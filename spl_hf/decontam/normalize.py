"""The form in which training and held-out prompts are compared.

Copies of a benchmark prompt in training data differ in case, spacing, punctuation and typography
("smart" quotes from a word processor, full-width characters from a web page). The normal form
folds all of these: NFKC, Unicode quotes and apostrophes to nothing (so ``don’t``, ``don't`` and
``dont`` agree), every other punctuation or symbol character to a space, case folded, runs of
whitespace to one space, trimmed. Stricter than ``spl_hf.sources.rows.normalize_text`` (which
keeps case and punctuation because it defines prompt identity): here a false match costs one
training prompt, a missed one a contaminated evaluation.
"""

from __future__ import annotations

import re
import unicodedata

# Quote-like characters NFKC leaves alone; removed rather than spaced so contractions stay one word.
_QUOTES = "'\"`´‘’‚‛“”„‟′″‵‶«»‹›＂＇"
_QUOTE_RE = re.compile("[" + re.escape(_QUOTES) + "]")
_PUNCT_RE = re.compile(r"[^\w\s]|_")
_WS_RE = re.compile(r"\s+")


def _ascii_map() -> tuple[bytes, bytes]:
    """One byte table doing what the steps below do to each ASCII character (and what they delete).

    Built from the steps themselves: on ASCII, NFKC changes nothing and every other step maps one
    character at a time, so translating by this table and then collapsing whitespace is the same.
    """
    table, drop = bytearray(range(256)), bytearray()
    for code in range(128):
        folded = _PUNCT_RE.sub(" ", _QUOTE_RE.sub("", chr(code)).casefold())
        if folded:
            table[code] = ord(folded)
        else:
            drop.append(code)
    return bytes(table), bytes(drop)


_ASCII_MAP, _ASCII_DROP = _ascii_map()


def normalize_prompt(text: str) -> str:
    """Normal form of a prompt text for contamination matching (see the module docstring)."""
    if text.isascii():  # most prompts: one byte-table pass instead of three regex passes
        text = text.encode("ascii").translate(_ASCII_MAP, _ASCII_DROP).decode("ascii")
        return " ".join(text.split())  # str.split splits where \s matches (str.isspace)
    text = unicodedata.normalize("NFKC", text)
    text = _QUOTE_RE.sub("", text).casefold()
    text = _PUNCT_RE.sub(" ", text)
    return _WS_RE.sub(" ", text).strip()


def ngrams(normal: str, n: int) -> frozenset[tuple[str, ...]]:
    """Distinct word n-grams of a normalised text; a text shorter than n words is one gram of all of it."""
    words = normal.split()
    if not words:
        return frozenset()
    if len(words) <= n:
        return frozenset([tuple(words)])
    if n < 1:  # no window size a config allows; kept as the slicing definition gives it
        return frozenset(tuple(words[i : i + n]) for i in range(len(words) - n + 1))
    return frozenset(zip(*(words[i:] for i in range(n))))  # the n-word windows, as tuples
