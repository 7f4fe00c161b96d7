"""Descriptive statistics across training seeds: mean, sample SD, Student-t interval of the mean.

Every value that would be undefined (one seed: no spread, no interval) is ``None`` with a stated
``note``; zero spread gives the zero-width interval that ``scipy.stats.ttest_1samp`` reports, where
``scipy.stats.t.interval`` would return NaN. Outputs never hold NaN.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass

from scipy import stats as _st

from spl_hf.errors import SplHfError

ONE_VALUE_NOTE = "one seed: no standard deviation or interval"
ZERO_SPREAD_NOTE = "zero spread across seeds: the interval has zero width"


@dataclass(frozen=True)
class SeedSummary:
    """Mean, sample SD (ddof=1) and the Student-t interval of the mean over per-seed values."""

    n: int
    mean: float
    sd: float | None
    df: int | None
    t_critical: float | None
    ci_low: float | None
    ci_high: float | None
    confidence: float
    note: str | None = None

    @property
    def half_width(self) -> float | None:
        return None if self.ci_high is None else self.ci_high - self.mean

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class PairedContrast:
    """``first`` minus ``second``, matched by seed: per-seed differences and their t interval."""

    first: str
    second: str
    seeds: tuple[int, ...]
    differences: tuple[float, ...]
    summary: SeedSummary

    def to_dict(self) -> dict:
        return {
            "first": self.first,
            "second": self.second,
            "seeds": list(self.seeds),
            "differences": list(self.differences),
            **self.summary.to_dict(),
        }


def _finite(values: Iterable[float], what: str) -> list[float]:
    out = [float(v) for v in values]
    bad = [v for v in out if not math.isfinite(v)]
    if bad:
        raise SplHfError(f"{what}: values must be finite numbers, got {bad}")
    return out


def describe(values: Iterable[float], confidence: float = 0.95, what: str = "values") -> SeedSummary:
    """Summarise per-seed values; ``what`` names them in errors."""
    if not 0.0 < confidence < 1.0:
        raise SplHfError(f"confidence must lie strictly between 0 and 1, got {confidence}")
    xs = _finite(values, what)
    n = len(xs)
    if n == 0:
        raise SplHfError(f"{what}: no values to summarise")
    mean = math.fsum(xs) / n
    if n == 1:
        return SeedSummary(1, mean, None, None, None, None, None, confidence, ONE_VALUE_NOTE)
    sd = math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (n - 1))
    df = n - 1
    t_crit = float(_st.t.ppf(0.5 + confidence / 2.0, df))
    if all(x == xs[0] for x in xs):
        # Exactly equal values: report the mean itself, not a rounding residue of the fsum.
        return SeedSummary(n, xs[0], 0.0, df, t_crit, xs[0], xs[0], confidence, ZERO_SPREAD_NOTE)
    half = t_crit * sd / math.sqrt(n)
    return SeedSummary(n, mean, sd, df, t_crit, mean - half, mean + half, confidence)


def paired_contrast(
    first: Mapping[int, float],
    second: Mapping[int, float],
    names: tuple[str, str] = ("first", "second"),
    confidence: float = 0.95,
) -> PairedContrast:
    """Per-seed ``first - second`` over seeds present in both; a seed in only one is an error."""
    only_first = sorted(set(first) - set(second))
    only_second = sorted(set(second) - set(first))
    if only_first or only_second:
        parts = []
        if only_first:
            parts.append(f"seed(s) {only_first} missing from {names[1]!r}")
        if only_second:
            parts.append(f"seed(s) {only_second} missing from {names[0]!r}")
        raise SplHfError(f"paired contrast {names[0]} - {names[1]}: " + "; ".join(parts))
    seeds = tuple(sorted(first))
    if not seeds:
        raise SplHfError(f"paired contrast {names[0]} - {names[1]}: no seeds")
    diffs = tuple(float(first[s]) - float(second[s]) for s in seeds)
    summary = describe(diffs, confidence, what=f"differences {names[0]} - {names[1]}")
    return PairedContrast(names[0], names[1], seeds, diffs, summary)
