"""The figures say what they show: checked on the data each draws (bars, notes, lines, axes), not pixels."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from spl_hf.dataset.figure_judge_quality import judge_quality_figure
from spl_hf.dataset.figure_pool_preference import pool_preference_data, pool_preference_figure
from spl_hf.report import RunMetrics, seed_report
from spl_hf.report.figures import conditions_data, figure_conditions


def _runs(seeds: list[int], at_limit: int) -> list[RunMetrics]:
    return [
        RunMetrics(cond, seed, "toxic", 4, k, k / 4, at_limit, at_limit / 4, "default", f"{cond}/{seed}")
        for cond, k in (("base", 0), ("adapter", 1))
        for seed in seeds
    ]


def _texts(fig) -> list[str]:
    return [t.get_text() for ax in fig.axes for t in ax.texts] + [fig._suptitle.get_text()]


def test_refusal_with_one_seed_states_n_and_the_at_limit_share_and_draws_no_interval():
    report = seed_report(_runs([0], at_limit=4), contrasts=[])
    data = conditions_data(report)
    got = {d["condition"]: (d["n"], d["seeds"], d["at_limit_share"], d["interval"]) for d in data}
    assert got == {"adapter": ([4], 1, 1.0, False), "base": ([4], 1, 1.0, False)}
    fig = figure_conditions(report)
    texts = _texts(fig)
    assert sum("n=4 × 1 seed" in t and "at limit 100%" in t for t in texts) == 2
    assert "no interval" in fig._suptitle.get_text() and "whisker" not in fig._suptitle.get_text()
    assert not any(type(c).__name__ == "ErrorbarContainer" for ax in fig.axes for c in ax.containers)


def test_refusal_with_three_seeds_draws_intervals_and_says_so():
    report = seed_report(_runs([0, 1, 2], at_limit=1), contrasts=[])
    assert all(
        d["interval"] and d["at_limit_share"] == 0.25 and d["seeds"] == 3 for d in conditions_data(report)
    )
    fig = figure_conditions(report)
    assert "t interval" in fig._suptitle.get_text()
    assert sum(type(c).__name__ == "ErrorbarContainer" for ax in fig.axes for c in ax.containers) == 2
    assert sum("n=4 × 3 seeds" in t and "at limit 25%" in t for t in _texts(fig)) == 2


def test_judge_quality_labels_its_threshold_and_scales_to_scores_near_zero():
    from spl_hf.contract import judge_quality

    scores = np.array([-0.04, -0.01, 0.0, 0.02, 0.05])
    table = pa.table(
        {
            "pair_id": [f"p{i}" for i in range(5)],
            "prompt_id": [f"q{i}" for i in range(5)],
            "source": ["s"] * 5,
            "tenet": ["t"] * 5,
            "score": scores,
            "p_a_first": 0.5 + scores / 2,
            "p_a_second": 0.5 - scores / 2,
            "mass_first": [0.9] * 5,
            "mass_second": [0.9] * 5,
            "source_preference": ["a", "b", None, "a", "b"],
        }
    )
    quality = judge_quality(table, {"t": np.array([0.05])}, threshold=0.01, capacity=1)
    fig = judge_quality_figure(quality, scores, np.array([0.05]), 0.01)
    left = fig.axes[0]
    assert left.get_xlim() == pytest.approx((-0.055, 0.055))
    assert "threshold ±0.01" in [t.get_text() for t in left.get_legend().get_texts()]
    assert {t.get_text() for t in left.texts} == {"-0.01", "+0.01"}
    assert sorted(line.get_xdata()[0] for line in left.lines) == [-0.01, 0.01]


def test_judge_score_against_the_pool_counts_agreement_per_source():
    table = pa.table(
        {
            "source": ["hh", "hh", "hh", "hh", "pku"],
            "source_preference": ["a", "a", "b", None, "b"],
            "score": [0.6, -0.5, -0.7, 0.9, 0.05],
        }
    )
    data = {(d["source"], d["preference"]): d for d in pool_preference_data(table, threshold=0.3)}
    assert (data["hh", "a"]["n"], data["hh", "a"]["eligible"], data["hh", "a"]["agree"]) == (2, 2, 1)
    assert (data["hh", "b"]["agree"], data["hh", "b"]["unstated"]) == (1, 1)
    assert (data["pku", "b"]["n"], data["pku", "b"]["eligible"], data["pku", "a"]["n"]) == (1, 0, 0)
    fig = pool_preference_figure(list(data.values()), 0.3)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["hh: pool prefers A", "hh: pool prefers B", "pku: pool prefers B"]
    assert next(t.get_text() for t in ax.texts) == "n=2, agree 1/2 eligible"
    assert next(c.get_offsets()[:, 0].tolist() for c in ax.collections) == [0.6, -0.5]
