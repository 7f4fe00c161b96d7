"""Typed field access for raw source records.

Every accessor raises :class:`RowError` naming the field and the problem, which the pool reader
turns into a quarantine record for that source and record index.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from spl_hf.sources.rows import Issue, normalize_text

# Cell values that mean "no text here". Community Alignment writes unused later turns as empty
# cells (NaN once a CSV reader has typed them) or as the literal "EMPTY STRING".
MISSING_MARKERS = frozenset({"EMPTY STRING", "NaN", "nan"})


class RowError(Exception):
    def __init__(self, reason: str, field: str | None, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.issue = Issue(reason, field, detail)


def is_missing(value: Any, markers: frozenset[str] = frozenset()) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    if isinstance(value, str):
        stripped = value.strip()
        return not stripped or stripped in markers
    return False


def _type_name(value: Any) -> str:
    return type(value).__name__


def show(value: Any, limit: int = 60) -> str:
    """A short repr for quarantine details (a 5 MB cell must not become a 5 MB reason)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


_SURROGATE = re.compile("[\ud800-\udfff]")


def text_problem(text: str, max_chars: int | None) -> tuple[str, str] | None:
    """(reason, detail) when a text cannot be a judged prompt or response, else None.

    A NUL character is corruption (no source writes one on purpose, and tokenizers and C tools
    treat it as an end of text); a lone surrogate cannot be encoded; beyond ``max_chars`` a text is
    far past any judge's context and is almost always a broken export (a cell that swallowed rows).
    """
    if "\x00" in text:
        return "bad_text", f"contains a NUL character at position {text.index(chr(0))}"
    found = None if text.isascii() else _SURROGATE.search(text)  # isascii is a flag test, no scan
    if found:
        return "bad_text", f"contains a lone surrogate {found.group()!a} at position {found.start()}"
    if max_chars is not None and len(text) > max_chars:
        return "text_too_long", f"{len(text):,} characters, over the {max_chars:,} limit (max_text_chars)"
    return None


def get_value(record: Mapping[str, Any], field: str) -> Any:
    if field not in record:
        raise RowError("missing_field", field, f"record has no field {field!r}")
    return record[field]


def get_text(record: Mapping[str, Any], field: str, *, empty_reason: str = "empty_text") -> str:
    """A required, non-blank string field (kept verbatim; blank means missing)."""
    value = get_value(record, field)
    if is_missing(value):
        raise RowError(empty_reason, field, f"{field!r} is empty or null")
    if not isinstance(value, str):
        raise RowError("wrong_type", field, f"{field!r} should be a string, got {_type_name(value)}")
    return value


def get_optional_text(
    record: Mapping[str, Any], field: str, markers: frozenset[str] = frozenset()
) -> str | None:
    """A string field that may be absent, null, blank or a missing-marker (returned as None)."""
    value = record.get(field)
    if is_missing(value, markers):
        return None
    if not isinstance(value, str):
        raise RowError("wrong_type", field, f"{field!r} should be a string, got {_type_name(value)}")
    return value


def get_int(record: Mapping[str, Any], field: str) -> int:
    """An integer field; integral floats and integer strings (CSV cells) are accepted, bools are not."""
    value = get_value(record, field)
    if isinstance(value, bool) or value is None:
        raise RowError("wrong_type", field, f"{field!r} should be an integer, got {show(value)}")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            pass
    raise RowError(
        "wrong_type", field, f"{field!r} should be an integer, got {_type_name(value)} {show(value)}"
    )


def get_number(record: Mapping[str, Any], field: str) -> float | None:
    """An optional number (None when absent or null)."""
    value = record.get(field)
    if value is None:
        return None
    if isinstance(value, bool):
        raise RowError("wrong_type", field, f"{field!r} should be a number, got {show(value)}")
    if isinstance(value, (int, float)):
        return None if isinstance(value, float) and math.isnan(value) else float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            pass
    raise RowError(
        "wrong_type", field, f"{field!r} should be a number, got {_type_name(value)} {show(value)}"
    )


def get_optional_bool(record: Mapping[str, Any], field: str) -> bool | None:
    """A flag that may be absent or null; ``true``/``false`` strings (CSV cells) are accepted."""
    value = record.get(field)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise RowError("wrong_type", field, f"{field!r} should be true or false, got {show(value)}")


def check_pair(a: str, b: str, field_a: str, field_b: str, what: str = "{field!r} is empty") -> None:
    """Responses a judge can compare: both non-blank and not the same text.

    ``what`` words the empty case when the response is only part of the field (HH-RLHF's final
    reply inside a whole transcript), so the message names what is actually empty.
    """
    for text, field in ((a, field_a), (b, field_b)):
        if not text.strip():
            raise RowError("empty_response", field, what.format(field=field))
    if normalize_text(a) == normalize_text(b):
        raise RowError("identical_responses", field_b, f"{field_a!r} and {field_b!r} are the same text")
