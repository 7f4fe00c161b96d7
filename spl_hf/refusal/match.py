"""Apply a matcher to many responses at once (pyarrow compute kernels), and to one (the reference).

:func:`match_one` is the literal per-response rule; :func:`match_array` computes the same thing
column-wise: one kernel pass per pattern over the normalised (and, for prefix matchers, truncated)
texts. The first matching pattern in list order is the one reported, in both.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from spl_hf.refusal.matchers import Matcher, get_matcher
from spl_hf.refusal.normalise import normalise, normalise_array


def _pattern(p: str, m: Matcher) -> str:
    p = normalise(p)
    return p if m.case_sensitive else p.lower()


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
        if (text.startswith(q) if m.mode == "prefix" else q in text):
            return p
    return None


def as_string_array(values: Any, field: str = "predictions") -> Any:
    """A pyarrow string array of ``values``; a missing or non-string entry raises naming its index."""
    import pyarrow as pa

    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if isinstance(values, pa.Array):
        if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)):
            raise ValueError(f"{field}: expected strings, got an array of {values.type}")
        arr = values
    else:
        try:
            arr = pa.array(values, type=pa.large_string())
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
            bad = next(i for i, v in enumerate(values) if not isinstance(v, str))
            raise ValueError(
                f"{field}[{bad}]: expected a string, got {type(values[bad]).__name__}"
            ) from None
    if arr.null_count:
        import pyarrow.compute as pc

        first = int(pc.index(pc.is_null(arr), True).as_py())
        raise ValueError(f"{field}[{first}]: missing (None); every response must be a string")
    return arr


def match_array(
    responses: Sequence[str] | Any, matcher: Matcher | str | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(is_refusal bool array, index into ``matcher.patterns`` of the matched pattern or -1)."""
    import pyarrow.compute as pc

    m = get_matcher(matcher)
    arr = normalise_array(as_string_array(responses))
    if m.mode == "prefix":
        # Only the opening can match: cut every text to the longest pattern before lower-casing.
        width = max(len(_pattern(p, m)) for p in (*m.patterns, *m.never))
        arr = pc.utf8_slice_codeunits(arr, 0, width)
    if not m.case_sensitive:
        arr = pc.utf8_lower(arr)
    n = len(arr)
    index = np.full(n, -1, dtype=np.int32)
    kernel = pc.starts_with if m.mode == "prefix" else pc.match_substring
    for i, p in enumerate(m.patterns):
        hit = kernel(arr, _pattern(p, m)).to_numpy(zero_copy_only=False)
        index[hit & (index < 0)] = i
    for p in m.never:
        index[pc.starts_with(arr, _pattern(p, m)).to_numpy(zero_copy_only=False)] = -1
    return index >= 0, index
