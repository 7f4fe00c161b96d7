"""Apply a matcher to many responses at once, and to one (the reference).

:func:`match_one` is the literal per-response rule. :func:`match_array` computes the same thing
column-wise with pyarrow kernels. Prefix matchers only ever look at the opening, so each response is
first cut to its normalised opening (as wide as the longest pattern) and the kernels run over those
short strings: one anchored regex finds the refusals, then one pass per pattern over the refusals
only names the first pattern in list order that matches. Substring
matchers run one kernel per pattern, in list order, over the full normalised texts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from spl_hf.errors import SplHfError
from spl_hf.refusal._normalise import APOSTROPHES, normalise
from spl_hf.refusal.matchers import Matcher, get_matcher

_RE2_SPECIAL = set("\\.^$|?*+()[]{}")


def _pattern(p: str, m: Matcher) -> str:
    p = normalise(p)
    return p if m.case_sensitive else p.lower()


def _escape(p: str) -> str:
    return "".join("\\" + c if c in _RE2_SPECIAL else c for c in p)


def _alternation(patterns: Sequence[str]) -> str:
    return "^(?:" + "|".join(_escape(p) for p in patterns) + ")"


def match_one(response: str, matcher: Matcher | str | None = None) -> str | None:
    """The pattern (as published) that marks ``response`` a refusal, or None."""
    m = get_matcher(matcher)
    text = normalise(response)
    if not m.case_sensitive:
        text = text.lower()
    if any(text.startswith(_pattern(p, m)) for p in m.never):
        return None
    for p in m.patterns:
        q = _pattern(p, m)
        if text.startswith(q) if m.mode == "prefix" else q in text:
            return p
    return None


def _bad_item(values: Sequence[Any], field: str) -> ValueError:
    bad = next(i for i, v in enumerate(values) if not isinstance(v, str))
    what = (
        "missing (None); every response must be a string"
        if values[bad] is None
        else (f"expected a string, got {type(values[bad]).__name__}")
    )
    return ValueError(f"{field}[{bad}]: {what}")


def as_string_array(values: Any, field: str = "predictions") -> Any:
    """A pyarrow string array of ``values``; a missing or non-string entry raises naming its index."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if isinstance(values, pa.Array):
        if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)):
            raise SplHfError(f"{field}: expected strings, got an array of {values.type}")
        if values.null_count:
            first = int(pc.index(pc.is_null(values), True).as_py())
            raise SplHfError(f"{field}[{first}]: missing (None); every response must be a string")
        return values
    try:
        return pa.array(values, type=pa.large_string())
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
        raise _bad_item(values, field) from None


def _is_arrow(values: Any) -> bool:
    import pyarrow as pa

    return isinstance(values, (pa.Array, pa.ChunkedArray))


def _replace_apostrophes(arr: Any) -> tuple[Any, bool]:
    """(array with curly apostrophes straightened, whether every string is ASCII).

    Only non-ASCII strings can hold one, so only those go through the (slow) regex kernel.
    """
    import pyarrow.compute as pc

    ascii_ = pc.string_is_ascii(arr)
    if pc.all(ascii_).as_py() is not False:
        return arr, True
    other = pc.invert(ascii_)
    fixed = pc.replace_substring_regex(arr.filter(other), "[" + "".join(APOSTROPHES) + "]", "'")
    return pc.replace_with_mask(arr, other, fixed), False


def _openings(values: Any, width: int, field: str) -> tuple[Any, bool]:
    """Each response's normalised opening, ``width`` characters long, as a pyarrow array."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if _is_arrow(values):
        col = as_string_array(values, field)
        head = pc.utf8_slice_codeunits(col, 0, width)
        lead = pc.not_equal(pc.utf8_length(pc.utf8_ltrim_whitespace(head)), pc.utf8_length(head))
        if pc.any(lead).as_py():
            # Responses that open with whitespace: strip the whole text, then cut (whitespace may be long).
            fixed = pc.utf8_slice_codeunits(pc.utf8_ltrim_whitespace(col.filter(lead)), 0, width)
            head = pc.replace_with_mask(head, lead, fixed.cast(head.type))
    else:
        try:
            # str.lstrip returns the same object when there is nothing to strip.
            head = pa.array([t.lstrip()[:width] for t in values], type=pa.string())
        except (AttributeError, TypeError):
            raise _bad_item(values, field) from None
    return _replace_apostrophes(head)


def _full_texts(values: Any, field: str) -> tuple[Any, bool]:
    import pyarrow as pa

    if _is_arrow(values):
        return _replace_apostrophes(as_string_array(values, field))
    try:
        return _replace_apostrophes(pa.array(values, type=pa.large_string()))
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
        raise _bad_item(values, field) from None


def match_array(
    responses: Sequence[str] | Any, matcher: Matcher | str | None = None, field: str = "predictions"
) -> tuple[np.ndarray, np.ndarray]:
    """(is_refusal bool array, index into ``matcher.patterns`` of the matched pattern or -1)."""
    import pyarrow.compute as pc

    m = get_matcher(matcher)
    patterns = [_pattern(p, m) for p in m.patterns]
    if m.mode == "prefix":
        arr, ascii_only = _openings(responses, max(len(p) for p in (*patterns, *m.never)), field)
    else:
        arr, ascii_only = _full_texts(responses, field)
    if not m.case_sensitive:
        arr = pc.ascii_lower(arr) if ascii_only else pc.utf8_lower(arr)
    if m.mode == "prefix":
        # One anchored-regex pass finds the refusals; which pattern matched is then worked out on
        # those rows only (first pattern in list order, as in match_one).
        hit = pc.match_substring_regex(arr, _alternation(patterns))
        rows = np.flatnonzero(hit.to_numpy(zero_copy_only=False))
        sub = arr.filter(hit)
        which = np.full(len(sub), -1, dtype=np.int32)
        for i, p in enumerate(patterns):
            h = pc.starts_with(sub, p).to_numpy(zero_copy_only=False)
            which[h & (which < 0)] = i
        index = np.full(len(arr), -1, dtype=np.int32)
        index[rows] = which
    else:
        index = np.full(len(arr), -1, dtype=np.int32)
        for i, p in enumerate(patterns):
            hit = pc.match_substring(arr, p).to_numpy(zero_copy_only=False)
            index[hit & (index < 0)] = i
    if m.never:
        never = pc.match_substring_regex(arr, _alternation([_pattern(p, m) for p in m.never]))
        index[never.to_numpy(zero_copy_only=False)] = -1
    return index >= 0, index
