"""Judge-quality figures: position consistency, |score| quantiles, source agreement (pure)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from sklearn.metrics import cohen_kappa_score

from spl_hf.contract.quality import (
    binary_kappa,
    judge_quality,
    position_counts,
    source_agreement,
)


def _scores(tenets, p1, p2, m1=None, m2=None) -> pa.Table:
    n = len(tenets)
    return pa.table(
        {
            "tenet": tenets,
            "p_a_first": p1,
            "p_a_second": p2,
            "mass_first": m1 if m1 is not None else [1.0] * n,
            "mass_second": m2 if m2 is not None else [1.0] * n,
        }
    )


def test_a_judge_that_always_prefers_the_first_shown_is_never_position_consistent():
    # The demo's 135M judge: P("A") high whichever response is shown first.
    p1 = np.full(72, 0.8)
    p2 = np.full(72, 0.7)  # with B shown first, P("A") high again: B, now first, wins
    c = position_counts(p1, p2)
    assert (c.judged, c.consistent, c.first_slot, c.second_slot) == (72, 0, 72, 0)
    assert c.rates() == {"consistent": 0.0, "first_slot": 1.0, "second_slot": 0.0}


def test_exact_half_decides_nothing_and_swapped_preference_is_consistent():
    # 0.5 decides nothing; (0.9, 0.1) prefers A twice; (0.1, 0.9) prefers B twice.
    c = position_counts(np.array([0.5, 0.9, 0.1, 0.9, 0.2]), np.array([0.9, 0.1, 0.9, 0.8, 0.3]))
    assert (c.consistent, c.first_slot, c.second_slot) == (2, 1, 1)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_binary_kappa_equals_sklearn(seed):
    rng = np.random.default_rng(seed)
    x, y = rng.random(200) < 0.6, rng.random(200) < 0.4
    assert binary_kappa(x, y) == pytest.approx(cohen_kappa_score(x, y), abs=1e-12)


def test_kappa_is_undefined_when_both_raters_say_one_thing():
    assert binary_kappa(np.ones(5, bool), np.ones(5, bool)) is None


def test_source_agreement_leaves_out_ties_and_unstated_preferences():
    got = source_agreement(
        np.array(["hh"] * 4 + ["ca"] * 2),
        np.array([True, True, False, True, True, False]),
        np.array(["a", "a", "a", "tie", None, None], dtype=object),
    )
    hh, ca = {s.source: s for s in got}["hh"], {s.source: s for s in got}["ca"]
    assert (hh.compared, hh.agree, hh.share) == (3, 2, pytest.approx(2 / 3))
    assert (ca.compared, ca.share, ca.kappa) == (0, None, None)


def test_per_tenet_and_overall_rows_from_the_stored_columns():
    table = _scores(
        ["t1", "t1", "t2", "t2"],
        [0.9, 0.6, 0.2, 0.5],
        [0.1, 0.55, 0.9, 0.5],
        m1=[0.9, 0.5, 1.0, 0.2],
        m2=[0.8, 0.5, 1.0, 0.2],
    )
    rows = {r.tenet: r for r in judge_quality(table, {"t1": [0.8]}, threshold=0.5, capacity=1)}
    assert list(rows) == ["t1", "t2", "all"]
    t1 = rows["t1"]
    assert (t1.eligible, t1.released, t1.capacity) == (1, 1, 1)
    assert t1.position.consistent == 1 and t1.position.judged == 2
    assert t1.abs_score_judged["mean"] == pytest.approx((0.8 + 0.05) / 2)
    assert t1.off_label_mass["q50"] == pytest.approx(np.quantile([0.1, 0.5, 0.2, 0.5], 0.5))
    assert rows["t2"].eligible == 1 and rows["t2"].released == 0
    assert rows["t2"].abs_score_released["mean"] is None  # an empty set is None, never NaN
    assert rows["all"].position.judged == 4 and rows["all"].capacity == 1
    d = rows["all"].to_dict()
    assert d["position"]["rates"]["consistent"] == 0.5


def test_the_figure_is_a_png_that_depends_on_the_data_only(tmp_path):
    from spl_hf.dataset.figure_judge_quality import save_judge_quality_figure

    def draw(name, p2):
        table = _scores(["t1", "t2", "t2"], [0.9, 0.6, 0.2], p2)
        scores = np.array([0.9, 0.6, 0.2]) - np.array(p2)
        quality = judge_quality(table, {"t1": scores[:1]}, threshold=0.5, capacity=1)
        return save_judge_quality_figure(tmp_path / name, quality, scores, scores[:1], 0.5).read_bytes()

    a, b, c = draw("a.png", [0.1, 0.7, 0.5]), draw("b.png", [0.1, 0.7, 0.5]), draw("c.png", [0.1, 0.2, 0.5])
    assert a[:8] == b"\x89PNG\r\n\x1a\n" and a == b and a != c


def test_source_agreement_counts_eligible_judgements_only_and_not_judged_sums_to_overall():
    from spl_hf.contract.quality import judge_quality_section

    table = _scores(["t1"] * 3 + ["t2"] * 2, [0.9, 0.2, 0.55, 0.9, 0.9], [0.1, 0.8, 0.5, 0.1, 0.1])
    table = table.append_column("source", pa.array(["hh", "hh", "hh", "hh", "pku"]))
    table = table.append_column("source_preference", pa.array(["a", "a", "a", "b", "tie"]))
    section = judge_quality_section(
        table, {"t1": [0.8]}, threshold=0.5, capacity=1, not_judged={"t1": 2, "t2": 1}
    )
    t1, t2 = section["tenets"]
    # t1: the 0.55-0.5 judgement is not eligible; of the eligible two, the judge agrees once (a) and
    # picks b once against the pool's a.
    assert [(a["source"], a["compared"], a["agree"]) for a in t1["sources"]] == [("hh", 2, 1)]
    # t2: hh says b, the judge a; pku states a tie, which is left out.
    assert [(a["source"], a["compared"], a["agree"]) for a in t2["sources"]] == [("hh", 1, 0), ("pku", 0, 0)]
    overall = {a["source"]: a for a in section["overall"]["sources"]}
    assert (overall["hh"]["compared"], overall["hh"]["agree"]) == (3, 1)
    assert (t1["not_judged"], t2["not_judged"], section["overall"]["not_judged"]) == (2, 1, 3)
    assert section["not_judged_recorded"] is True


def test_figures_are_named_by_tenet_and_source_so_a_difference_says_what_it_is_about():
    from spl_hf.contract.quality import flat_figures

    flat = flat_figures({"tenets": [{"tenet": "t1", "sources": [{"source": "hh", "agree": 2}]}]})
    assert flat == {
        "tenets[t1].tenet": "t1",
        "tenets[t1].sources[hh].source": "hh",
        "tenets[t1].sources[hh].agree": 2,
    }
