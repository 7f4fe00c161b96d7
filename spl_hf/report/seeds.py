"""Refusal across seeds: the tables of the paper's Figures 4 and 5 and Tables XIV and XV.

Rates are reported in percent and contrasts in percentage points, computed from the unrounded
proportions of the metrics files.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations

from spl_hf.errors import SplHfError, UnknownNameError
from spl_hf.report.runs import RunMetrics
from spl_hf.stats import ALL_SEEDS, PairedContrast, SeedSummary, at_limit_rows, describe, paired_contrast


@dataclass(frozen=True)
class ConditionSummary:
    condition: str
    prompt_set: str
    seeds: tuple[int, ...]
    rates: tuple[float, ...]  # percent, one per seed
    summary: SeedSummary

    def to_dict(self) -> dict:
        return {
            "condition": self.condition,
            "prompt_set": self.prompt_set,
            "seeds": list(self.seeds),
            "rates": list(self.rates),
            **self.summary.to_dict(),
        }


@dataclass(frozen=True)
class ContrastSummary:
    prompt_set: str
    contrast: PairedContrast  # percentage points
    at_limit_first: tuple[int, ...]  # per seed, in contrast.seeds order
    at_limit_second: tuple[int, ...]

    def to_dict(self) -> dict:
        return {
            "prompt_set": self.prompt_set,
            **self.contrast.to_dict(),
            "at_limit_first": list(self.at_limit_first),
            "at_limit_second": list(self.at_limit_second),
        }


@dataclass(frozen=True)
class SeedReport:
    conditions: tuple[str, ...]
    prompt_sets: tuple[str, ...]
    matchers: dict[str, str]
    confidence: float
    summaries: list[ConditionSummary]
    contrasts: list[ContrastSummary]
    runs: list[RunMetrics] = field(repr=False)

    def run(self, condition: str, seed: int, prompt_set: str) -> RunMetrics:
        for r in self.runs:
            if (r.condition, r.seed, r.prompt_set) == (condition, seed, prompt_set):
                return r
        raise UnknownNameError(f"no run {condition}/seed{seed} for {prompt_set}")

    def seeds(self, condition: str) -> tuple[int, ...]:
        return tuple(sorted({r.seed for r in self.runs if r.condition == condition}))

    def to_dict(self) -> dict:
        return {
            "conditions": list(self.conditions),
            "prompt_sets": list(self.prompt_sets),
            "matchers": self.matchers,
            "confidence": self.confidence,
            "units": {"rates": "percent", "differences": "percentage points"},
            "summaries": [s.to_dict() for s in self.summaries],
            "contrasts": [c.to_dict() for c in self.contrasts],
            "at_limit": [
                {
                    "condition": r.condition,
                    "seed": r.seed,
                    "prompt_set": r.prompt_set,
                    "n": r.n,
                    "at_limit": r.at_limit,
                    "percent": 100.0 * r.at_limit_rate,
                }
                for r in self.runs
            ],
            "at_limit_pooled": [
                {"condition": c, "prompt_set": ps, "n": n, "at_limit": k, "percent": 100.0 * k / n}
                for c, ps, n, k in self.pooled_at_limit()
            ],
        }

    def pooled_at_limit(self) -> list[tuple[str, str, int, int]]:
        """Table XIV's pooled rows (the one definition, :func:`spl_hf.stats.at_limit_rows`), in report order."""
        rows = at_limit_rows(
            {
                "condition": r.condition,
                "seed": r.seed,
                "prompt_set": r.prompt_set,
                "n": r.n,
                "at_limit": r.at_limit,
            }
            for r in self.runs
        )
        pooled = {(r["condition"], r["prompt_set"]): r for r in rows if r["seed"] == ALL_SEEDS}
        out = []
        for c in self.conditions:
            for ps in self.prompt_sets:
                r = pooled.get((c, ps), {"n": 0, "at_limit": 0})
                out.append((c, ps, r["n"], r["at_limit"]))
        return out

    def to_markdown(self) -> str:
        pct = self.confidence * 100
        lines = [
            f"## Measured refusal by condition (Figure 4; matchers: {_matchers(self.matchers)})",
            "",
            f"| prompt set | condition | seeds | per-seed refusal (%) | mean | SD | {pct:g}% interval | df | t |",
            "|---|---|---:|---|---:|---:|---|---:|---:|",
        ]
        for s in self.summaries:
            lines.append(
                f"| {s.prompt_set} | {s.condition} | {s.summary.n} | {_list(s.rates)} | "
                + _stat_cells(s.summary)
            )
        lines += _notes(self.summaries)
        if self.contrasts:
            lines += [
                "",
                "## Paired contrasts by seed (Figure 5, Table XV; percentage points)",
                "",
                f"| prompt set | contrast | per-seed differences | mean | SD | {pct:g}% interval | df | t |",
                "|---|---|---|---:|---:|---|---:|---:|",
            ]
            for c in self.contrasts:
                k = c.contrast
                lines.append(
                    f"| {c.prompt_set} | {k.first} − {k.second} | {_list(k.differences, signed=True)} | "
                    + _stat_cells(k.summary, signed=True)
                )
            notes = [
                f"- {c.prompt_set} / {c.contrast.first} − {c.contrast.second}: {c.contrast.summary.note}"
                for c in self.contrasts
                if c.contrast.summary.note
            ]
            lines += ["", *notes] if notes else []
            for c in self.contrasts:
                k = c.contrast
                lines += [
                    "",
                    f"### {c.prompt_set}: {k.first} − {k.second} by seed",
                    "",
                    f"| seed | difference (pp) | {k.first} at limit | {k.second} at limit |",
                    "|---:|---:|---:|---:|",
                ]
                for seed, d, a, b in zip(k.seeds, k.differences, c.at_limit_first, c.at_limit_second):
                    lines.append(f"| {seed} | {d:+.2f} | {a} | {b} |")
                lines.append(
                    f"| all seeds | {k.summary.mean:+.2f} | {sum(c.at_limit_first)} | "
                    f"{sum(c.at_limit_second)} |"
                )
        lines += [
            "",
            "## Responses at the token limit (Table XIV)",
            "",
            "| condition | seed | " + " | ".join(f"{ps} at limit | %" for ps in self.prompt_sets) + " |",
            "|---|---:|" + "---:|---:|" * len(self.prompt_sets),
        ]
        for c in self.conditions:
            for seed in self.seeds(c):
                cells = []
                for ps in self.prompt_sets:
                    r = self.run(c, seed, ps)
                    cells.append(f"{r.at_limit} | {100 * r.at_limit_rate:.2f}")
                lines.append(f"| {c} | {seed} | " + " | ".join(cells) + " |")
            pooled = {ps: (n, k) for cc, ps, n, k in self.pooled_at_limit() if cc == c}
            lines.append(
                f"| {c} | all seeds | "
                + " | ".join(
                    f"{pooled[ps][1]} | {100 * pooled[ps][1] / pooled[ps][0]:.2f}" for ps in self.prompt_sets
                )
                + " |"
            )
        return "\n".join(lines) + "\n"


def _matchers(m: dict[str, str]) -> str:
    return ", ".join(f"{ps}: {name}" for ps, name in m.items())


def _list(values: Sequence[float], signed: bool = False) -> str:
    return ", ".join(f"{v:+.2f}" if signed else f"{v:.2f}" for v in values)


def _stat_cells(s: SeedSummary, signed: bool = False) -> str:
    mean = f"{s.mean:+.2f}" if signed else f"{s.mean:.2f}"
    if s.sd is None:
        return f"{mean} | — | — | — | — |"
    assert s.ci_low is not None and s.ci_high is not None and s.t_critical is not None
    lo, hi = (f"{s.ci_low:+.2f}", f"{s.ci_high:+.2f}") if signed else (f"{s.ci_low:.2f}", f"{s.ci_high:.2f}")
    return f"{mean} | {s.sd:.2f} | [{lo}, {hi}] | {s.df} | {s.t_critical:.3f} |"


def _notes(summaries: Sequence[ConditionSummary]) -> list[str]:
    notes = [f"- {s.prompt_set} / {s.condition}: {s.summary.note}" for s in summaries if s.summary.note]
    return ["", *notes] if notes else []


def parse_contrast(text: str) -> tuple[str, str]:
    """``"A:B"`` (A minus B) as a pair of condition names."""
    parts = text.split(":")
    if len(parts) != 2 or not all(parts) or parts[0] == parts[1]:
        raise SplHfError(f"contrast {text!r}: expected FIRST:SECOND naming two different conditions")
    return parts[0], parts[1]


def seed_report(
    runs: Sequence[RunMetrics],
    contrasts: Sequence[tuple[str, str]] | None = None,
    confidence: float = 0.95,
) -> SeedReport:
    """Per-condition summaries and paired contrasts (default: every pair of conditions, in name order)."""
    if not runs:
        raise SplHfError("no runs to report")
    conditions = tuple(sorted({r.condition for r in runs}))
    prompt_sets = tuple(sorted({r.prompt_set for r in runs}))
    if contrasts is None:
        contrasts = list(combinations(conditions, 2))
    for a, b in contrasts:
        for c in (a, b):
            if c not in conditions:
                raise SplHfError(
                    f"contrast {a}:{b}: no condition {c!r} in the runs (have {list(conditions)})"
                )
    matchers = {ps: next(r.matcher for r in runs if r.prompt_set == ps) for ps in prompt_sets}
    by = {(r.condition, r.prompt_set, r.seed): r for r in runs}
    summaries = []
    for ps in prompt_sets:
        for c in conditions:
            rs = sorted((r for r in runs if r.condition == c and r.prompt_set == ps), key=lambda r: r.seed)
            rates = tuple(100.0 * r.refusal_rate for r in rs)
            summaries.append(
                ConditionSummary(
                    c, ps, tuple(r.seed for r in rs), rates, describe(rates, confidence, what=f"{c}/{ps}")
                )
            )
    out_contrasts = []
    for ps in prompt_sets:
        for a, b in contrasts:
            first = {s: 100.0 * r.refusal_rate for (c, p, s), r in by.items() if c == a and p == ps}
            second = {s: 100.0 * r.refusal_rate for (c, p, s), r in by.items() if c == b and p == ps}
            k = paired_contrast(first, second, (a, b), confidence)
            out_contrasts.append(
                ContrastSummary(
                    ps,
                    k,
                    tuple(by[(a, ps, s)].at_limit for s in k.seeds),
                    tuple(by[(b, ps, s)].at_limit for s in k.seeds),
                )
            )
    return SeedReport(conditions, prompt_sets, matchers, confidence, summaries, out_contrasts, list(runs))
