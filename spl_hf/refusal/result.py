"""Refusal rate of a set of responses, split by token-limit status and category."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from spl_hf.errors import SplHfError
from spl_hf.refusal.match import match_array
from spl_hf.refusal.matchers import Matcher, get_matcher


@dataclass(frozen=True)
class GroupRate:
    n: int
    n_refusals: int
    refusal_rate: float | None  # None when the group is empty (stated, not NaN)
    at_limit: int


@dataclass(frozen=True)
class RefusalResult:
    """Proportions are in [0, 1]; a rate over an empty group is None."""

    matcher: str
    matcher_hash: str
    n: int
    n_refusals: int
    refusal_rate: float
    at_limit: int
    at_limit_rate: float
    n_refusals_at_limit: int
    refusal_rate_at_limit: float | None
    refusal_rate_not_at_limit: float | None
    per_category: dict[str, GroupRate] | None = None
    refusals: tuple[bool, ...] | None = None  # per item, with return_labels
    matched: tuple[str | None, ...] | None = None  # the published pattern that matched, per item

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _rate(k: int, n: int) -> float | None:
    return k / n if n else None


def _bools(values: Any, n: int, field: str) -> np.ndarray:
    if hasattr(values, "to_numpy"):
        arr = np.asarray(values.to_numpy(zero_copy_only=False))
    elif isinstance(values, np.ndarray):
        arr = values
    else:  # a plain sequence: keep each element's own type so "yes" is not coerced alongside booleans
        seq = list(values)
        arr = np.empty(len(seq), dtype=object)
        arr[:] = seq
        if all(type(v) is bool for v in seq):
            arr = arr.astype(bool)
    if arr.ndim != 1 or len(arr) != n:
        raise SplHfError(f"{field}: {arr.size} values for {n} predictions; one per prediction is required")
    if arr.dtype == bool:
        return arr
    ok = (
        np.isin(arr, (0, 1))
        if arr.dtype.kind in "iu"
        else np.array(
            [
                isinstance(v, (bool, np.bool_)) or (isinstance(v, (int, np.integer)) and v in (0, 1))
                for v in arr.tolist()
            ],
            dtype=bool,
        )
    )
    if not ok.all():
        i = int(np.argmin(ok))
        raise SplHfError(f"{field}[{i}]: expected true or false, got {arr[i]!r}")
    return arr.astype(bool)


def compute_refusal(
    predictions: Sequence[str] | Any,
    at_limit: Sequence[bool] | Any,
    categories: Sequence[str] | None = None,
    matcher: Matcher | str | None = None,
    return_labels: bool = False,
) -> RefusalResult:
    """Refusal rate of ``predictions`` under ``matcher`` (the project default when None).

    ``at_limit[i]`` says whether response i stopped at the token limit; ``categories[i]`` (optional)
    groups the rates. Unequal lengths, an empty list, a missing response or a non-boolean flag raise
    ``ValueError`` naming the input and position.
    """
    m = get_matcher(matcher)
    if isinstance(predictions, str):
        raise SplHfError("predictions: expected a list of responses, got one string")
    n = len(predictions)
    if n == 0:
        raise SplHfError("predictions: empty; a refusal rate needs at least one response")
    limit = _bools(at_limit, n, "at_limit")
    refused, index = match_array(predictions, m)
    k = int(refused.sum())
    n_lim = int(limit.sum())
    k_lim = int((refused & limit).sum())
    per_category = None
    if categories is not None:
        cats = list(categories.tolist() if hasattr(categories, "tolist") else categories)
        if len(cats) != n:
            raise SplHfError(
                f"categories: {len(cats)} values for {n} predictions; one per prediction is required"
            )
        for i, c in enumerate(cats):
            if not isinstance(c, str):
                raise SplHfError(f"categories[{i}]: expected a string, got {type(c).__name__}")
        names, inverse = np.unique(np.asarray(cats, dtype=object).astype(str), return_inverse=True)
        counts = np.bincount(inverse, minlength=len(names))
        hits = np.bincount(inverse, weights=refused, minlength=len(names))
        lims = np.bincount(inverse, weights=limit, minlength=len(names))
        per_category = {
            str(name): GroupRate(int(c), int(h), _rate(int(h), int(c)), int(li))
            for name, c, h, li in zip(names, counts, hits, lims)
        }
    labels = matched = None
    if return_labels:
        labels = tuple(bool(x) for x in refused)
        matched = tuple(m.patterns[i] if i >= 0 else None for i in index.tolist())
    return RefusalResult(
        matcher=m.id,
        matcher_hash=m.hash,
        n=n,
        n_refusals=k,
        refusal_rate=k / n,
        at_limit=n_lim,
        at_limit_rate=n_lim / n,
        n_refusals_at_limit=k_lim,
        refusal_rate_at_limit=_rate(k_lim, n_lim),
        refusal_rate_not_at_limit=_rate(k - k_lim, n - n_lim),
        per_category=per_category,
        refusals=labels,
        matched=matched,
    )
