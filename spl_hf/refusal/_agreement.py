"""Agreement between two refusal classifiers on the same labelled sample."""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from spl_hf.errors import SplHfError


@dataclass(frozen=True)
class Agreement:
    """``confusion[a_label][b_label]`` counts items; ``missing`` items (a label is None) are left out."""

    n: int
    n_agree: int
    rate: float
    cohen_kappa: float | None  # None when chance agreement is 1 (both use a single, shared label)
    labels: tuple[str, ...]
    confusion: dict[str, dict[str, int]]
    missing: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _name(label: Hashable) -> str:
    if isinstance(label, bool):
        return "refusal" if label else "compliance"
    return str(label)


def agreement(a_labels: Sequence[Hashable | None], b_labels: Sequence[Hashable | None]) -> Agreement:
    """Raw agreement, Cohen's kappa and the confusion table of two label lists (same items, same order).

    Booleans read as refusal (True) / compliance (False), so a string matcher's flags compare with a
    model classifier's labels once both use the same vocabulary. ``None`` is an unparsed label: the
    item is counted in ``missing`` and excluded.
    """
    a, b = list(a_labels), list(b_labels)
    if len(a) != len(b):
        raise SplHfError(f"agreement: {len(a)} labels from the first classifier, {len(b)} from the second")
    if not a:
        raise SplHfError("agreement: no labelled items")
    pairs = [(_name(x), _name(y)) for x, y in zip(a, b) if x is not None and y is not None]
    missing = len(a) - len(pairs)
    if not pairs:
        raise SplHfError(f"agreement: all {len(a)} items lack a label from one of the classifiers")
    labels = tuple(sorted({x for p in pairs for x in p}))
    confusion = {x: dict.fromkeys(labels, 0) for x in labels}
    for x, y in pairs:
        confusion[x][y] += 1
    n = len(pairs)
    agree = sum(confusion[x][x] for x in labels)
    pa, pb = Counter(x for x, _ in pairs), Counter(y for _, y in pairs)
    pe = sum(pa[lab] * pb[lab] for lab in labels) / (n * n)
    po = agree / n
    kappa = None if pe >= 1.0 else (po - pe) / (1.0 - pe)
    return Agreement(n, agree, po, kappa, labels, confusion, missing)
