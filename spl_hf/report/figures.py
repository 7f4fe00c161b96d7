"""The seed figures: per-seed points, mean bar and interval whisker; paired lines by seed.

Figures are built as ``matplotlib.figure.Figure`` objects without pyplot, so drawing touches no global
backend state (a notebook's inline display keeps working) and PNGs are rendered by Agg. matplotlib is
imported only when a figure is drawn.
"""

from __future__ import annotations

import re
from pathlib import Path

from spl_hf.dataset import save_png
from spl_hf.errors import SplHfError
from spl_hf.report.seeds import SeedReport
from spl_hf.stats import SeedSummary

MIN_SEEDS_FOR_INTERVAL = 2  # a t interval needs at least two seeds
MARKERS = ("s", "^", "o", "D", "v", "P", "X")


def _figure(width: float, height: float, panels: int):
    from matplotlib import rcParams
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height))
    axes = fig.subplots(1, panels, squeeze=False)[0]
    return fig, axes, rcParams["axes.prop_cycle"].by_key()["color"]


def _offsets(n: int, width: float = 0.24) -> list[float]:
    """Fixed horizontal spread of n seed points around a bar centre (no random jitter)."""
    if n == 1:
        return [0.0]
    return [-width / 2 + width * i / (n - 1) for i in range(n)]


def _whisker(ax, x: float, s: SeedSummary) -> None:
    """The confidence interval as a black whisker around the mean (none when it is undefined)."""
    if s.ci_low is not None and s.ci_high is not None:
        ax.errorbar(
            x,
            s.mean,
            yerr=[[s.mean - s.ci_low], [s.ci_high - s.mean]],
            fmt="none",
            ecolor="black",
            elinewidth=1.2,
            capsize=6,
            zorder=3,
        )


def _mean_mark(ax, x: float, s: SeedSummary, color: str) -> None:
    """A short horizontal bar at the mean with its whisker, for zoomed axes where a full bar would mislead."""
    ax.hlines(s.mean, x - 0.22, x + 0.22, colors=color, linewidth=3, zorder=3)
    _whisker(ax, x, s)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)


def conditions_data(report: SeedReport) -> list[dict]:
    """What each bar of :func:`figure_conditions` shows: the mean over seeds, the prompts per seed (n),
    the share of responses that stopped at the token limit, and whether an interval is drawn."""
    out = []
    for ps in report.prompt_sets:
        for c in report.conditions:
            s = next(x for x in report.summaries if x.condition == c and x.prompt_set == ps)
            runs = [r for r in report.runs if r.condition == c and r.prompt_set == ps]
            total = sum(r.n for r in runs)
            out.append(
                {
                    "prompt_set": ps,
                    "condition": c,
                    "seeds": len(s.rates),
                    "n": sorted({r.n for r in runs}),
                    "mean": s.summary.mean,
                    "at_limit_share": sum(r.at_limit for r in runs) / total if total else None,
                    "interval": len(s.rates) >= MIN_SEEDS_FOR_INTERVAL and s.summary.ci_low is not None,
                }
            )
    return out


def _bar_note(d: dict) -> str:
    n = "/".join(str(x) for x in d["n"]) or "0"
    limit = "–" if d["at_limit_share"] is None else f"{d['at_limit_share'] * 100:.0f}%"
    return f"n={n} × {d['seeds']} seed{'s' if d['seeds'] != 1 else ''}\nat limit {limit}"


def _conditions_title(data: list[dict], pct: str) -> str:
    if all(d["interval"] for d in data):
        return f"Refusal across seeds: points = seeds, bar = mean, whisker = {pct} t interval"
    return (
        "Refusal: points = seeds, bar = mean; no interval where there is 1 seed (needs ≥ 2)\n"
        "n = prompts per seed; at limit = responses cut at the token limit (a refusal after the cut is not seen)"
    )


def figure_conditions(report: SeedReport):
    """Figure 4: one panel per prompt set, one bar per condition with its seeds as points, each bar
    labelled with its n and at-limit share; intervals only where there are at least 2 seeds."""
    fig, axes, colors = _figure(
        3.2 + 1.1 * len(report.conditions) * len(report.prompt_sets), 4.0, len(report.prompt_sets)
    )
    data = conditions_data(report)
    for ax, ps in zip(axes, report.prompt_sets):
        for i, c in enumerate(report.conditions):
            s = next(x for x in report.summaries if x.condition == c and x.prompt_set == ps)
            d = next(x for x in data if x["condition"] == c and x["prompt_set"] == ps)
            color = colors[i % len(colors)]
            ax.bar(i, s.summary.mean, width=0.55, color=color, alpha=0.35, edgecolor=color, zorder=1)
            if d["interval"]:
                _whisker(ax, i, s.summary)
            ax.scatter(
                [i + o for o in _offsets(len(s.rates))],
                s.rates,
                marker="s",
                s=22,
                color=color,
                edgecolor="black",
                linewidth=0.5,
                zorder=4,
            )
            ax.annotate(
                _bar_note(d),
                (i, 100),
                xytext=(0, -3),
                textcoords="offset points",
                ha="center",
                va="top",
                fontsize=7,
            )
        ax.set_xticks(range(len(report.conditions)), report.conditions, rotation=15)
        ax.set_title(f"{ps} (matcher: {report.matchers[ps]})", fontsize=9)
        ax.set_ylabel("measured refusal (%)")
        ax.set_ylim(0, 100)
    fig.suptitle(_conditions_title(data, f"{report.confidence * 100:g}%"), fontsize=8)
    fig.tight_layout()
    return fig


def figure_contrast(report: SeedReport, first: str, second: str):
    """Figure 5: the two conditions side by side per prompt set, same-seed runs joined by gray lines."""
    pairs = [c for c in report.contrasts if (c.contrast.first, c.contrast.second) == (first, second)]
    if not pairs:
        raise SplHfError(f"the report has no contrast {first}:{second}")
    fig, axes, colors = _figure(3.6 * len(pairs), 4.0, len(pairs))
    for ax, cs in zip(axes, pairs):
        k = cs.contrast
        ys = []
        for i, cond in enumerate((first, second)):
            s = next(x for x in report.summaries if x.condition == cond and x.prompt_set == cs.prompt_set)
            by_seed = dict(zip(s.seeds, s.rates))
            ys.append([by_seed[seed] for seed in k.seeds])
            _mean_mark(ax, i, s.summary, colors[i % len(colors)])
        for y0, y1 in zip(*ys):
            ax.plot([0, 1], [y0, y1], color="gray", linewidth=0.8, zorder=2)
        for i in (0, 1):
            ax.scatter(
                [i] * len(ys[i]),
                ys[i],
                marker=MARKERS[i],
                s=26,
                color=colors[i % len(colors)],
                edgecolor="black",
                linewidth=0.5,
                zorder=4,
            )
        ax.set_xticks([0, 1], [first, second])
        ax.set_xlim(-0.6, 1.6)
        s = k.summary
        ci = (
            ""
            if s.ci_low is None
            else f"\n{report.confidence * 100:g}% interval [{s.ci_low:+.2f}, {s.ci_high:+.2f}]"
        )
        ax.set_title(f"{cs.prompt_set}\ndifference {s.mean:+.2f} pp{ci}", fontsize=9)
        ax.set_ylabel("measured refusal (%)")
    fig.suptitle(
        f"Paired by seed: {first} − {second}\n(gray lines join runs of the same seed; bar = mean)", fontsize=9
    )
    fig.tight_layout()
    return fig


def write_figures(report: SeedReport, out_dir: str | Path) -> list[Path]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = [save_png(figure_conditions(report), out / "refusal_by_condition.png")]
    seen = []
    for c in report.contrasts:
        key = (c.contrast.first, c.contrast.second)
        if key not in seen:
            seen.append(key)
            fig = figure_contrast(report, *key)
            paths.append(save_png(fig, out / f"paired_{_slug(key[0])}_vs_{_slug(key[1])}.png"))
    return paths
