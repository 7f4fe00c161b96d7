"""One JSON record decoded for the ``.jsonl`` and ``.json`` readers, with its damage named.

Python's ``json`` keeps the last of two equal keys silently, so ``{"prompt": "a", "prompt": "b"}``
would be read as ``"b"`` with no word; the decoder here refuses the record instead
(``duplicate_key``, with the key as the field).
"""

from __future__ import annotations

import json
from typing import Any

from spl_hf.sources.formats.damage import (
    SURROGATE_ESCAPE,
    UnparsableRecord,
    huge_int,
    lone_surrogate,
    surrogate_path,
)


class DuplicateKey(ValueError):
    """Raised from inside the decoder: an object names a key twice."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKey(key)
            seen.add(key)
    return out


DECODER = json.JSONDecoder(object_pairs_hook=_unique_pairs)


def duplicate_key(key: str, what: str) -> UnparsableRecord:
    shown = key if len(key) <= 60 else key[:59] + "…"
    return UnparsableRecord(
        f"{what}: the key {shown!r} appears twice in one object (JSON keeps only the last value, so "
        "which one the source meant is unknown)",
        "duplicate_key",
        key.split(".", 1)[0] if len(key) <= 200 else None,
    )


def as_record(value: Any, what: str) -> dict[str, Any] | UnparsableRecord:
    if not isinstance(value, dict):
        return UnparsableRecord(f"{what}: a JSON {type(value).__name__}, not an object")
    return value


def decode_error(exc: Exception, what: str) -> UnparsableRecord:
    """The quarantine entry of a record the decoder refused (``exc`` from :data:`DECODER`)."""
    if isinstance(exc, DuplicateKey):
        return duplicate_key(exc.key, what)
    if isinstance(exc, json.JSONDecodeError):
        return UnparsableRecord(f"{what}: invalid JSON ({exc.msg})")
    if isinstance(exc, RecursionError):
        return UnparsableRecord(f"{what}: JSON nested too deeply to read", "too_deep")
    return huge_int(what)  # a ValueError: an integer past Python's int-str conversion limit


def decode_line(line: str, what: str) -> dict[str, Any] | UnparsableRecord:
    """One JSON Lines record: an object, or what is wrong with it."""
    try:
        value = DECODER.decode(line)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError and DuplicateKey are ValueErrors
        return decode_error(exc, what)
    if SURROGATE_ESCAPE.search(line):
        where = surrogate_path(value)
        if where is not None:
            return lone_surrogate(where, what)
    return as_record(value, what)
