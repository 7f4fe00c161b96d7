"""Agreement measures on label lists (pure): plurality reference, Cohen's and Fleiss' kappa, F1.

Undefined values (a kappa whose chance agreement is 1, an F1 with no positives anywhere) are
``None``; callers state why. Nothing here returns NaN.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from spl_hf.errors import SplHfError


def plurality(labels: Sequence[Hashable]) -> Hashable | None:
    """The most frequent label, or ``None`` when two or more labels share the top count (a tie)."""
    if not labels:
        raise SplHfError("plurality of no labels")
    counts = Counter(labels).most_common()
    if len(counts) > 1 and counts[0][1] == counts[1][1]:
        return None
    return counts[0][0]


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float | None:
    """Cohen's kappa of two label lists over the same items (None when chance agreement is 1)."""
    if len(a) != len(b):
        raise SplHfError(f"cohen_kappa: {len(a)} labels against {len(b)}")
    n = len(a)
    if n == 0:
        return None
    observed = sum(x == y for x, y in zip(a, b)) / n
    ca, cb = Counter(a), Counter(b)
    expected = sum(ca[k] * cb[k] for k in ca) / (n * n)
    if expected == 1.0:
        return None
    return (observed - expected) / (1.0 - expected)


def fleiss_kappa(counts: Sequence[Sequence[int]]) -> float | None:
    """Fleiss' kappa from an items × categories table of rating counts (equal raters per item)."""
    if not counts:
        return None
    m = sum(counts[0])
    if m < 2:
        raise SplHfError("fleiss_kappa: needs at least two ratings per item")
    for i, row in enumerate(counts):
        if sum(row) != m:
            raise SplHfError(f"fleiss_kappa: item {i} has {sum(row)} ratings, item 0 has {m}")
    n = len(counts)
    p_items = [(sum(c * c for c in row) - m) / (m * (m - 1)) for row in counts]
    p_bar = sum(p_items) / n
    k = len(counts[0])
    p_cat = [sum(row[j] for row in counts) / (n * m) for j in range(k)]
    p_e = sum(p * p for p in p_cat)
    if p_e == 1.0:
        return None
    return (p_bar - p_e) / (1.0 - p_e)


@dataclass(frozen=True)
class BinaryCounts:
    true_positives: int
    false_positives: int
    false_negatives: int
    true_negatives: int

    @property
    def f1(self) -> float | None:
        denom = 2 * self.true_positives + self.false_positives + self.false_negatives
        return None if denom == 0 else 2 * self.true_positives / denom


def binary_counts(
    predicted: Sequence[Hashable], reference: Sequence[Hashable], positive: Hashable
) -> BinaryCounts:
    if len(predicted) != len(reference):
        raise SplHfError(f"binary_counts: {len(predicted)} predictions against {len(reference)} references")
    tp = sum(p == positive and r == positive for p, r in zip(predicted, reference))
    fp = sum(p == positive and r != positive for p, r in zip(predicted, reference))
    fn = sum(p != positive and r == positive for p, r in zip(predicted, reference))
    return BinaryCounts(tp, fp, fn, len(predicted) - tp - fp - fn)


def confusion(
    predicted: Sequence[str], reference: Sequence[str], order: Sequence[str]
) -> tuple[list[str], list[str], list[list[int]]]:
    """Rows: predicted labels; columns: reference labels; both only those that occur, in ``order``."""
    rows = [v for v in order if v in set(predicted)]
    cols = [v for v in order if v in set(reference)]
    pairs = Counter(zip(predicted, reference))
    return rows, cols, [[pairs[(r, c)] for c in cols] for r in rows]
