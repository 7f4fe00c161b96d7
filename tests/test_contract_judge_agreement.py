"""Judge quality that means something: the pool gate is the Wilson lower bound of the agreement share
(defined when every pool states side "a"), kappa says when it is degenerate, constitution_v3's gates
pass a good judge and stop a position-biased one (constructed judgements), and one pure function
names a row's probabilities and flags a position-inconsistent judgement."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pytest

from spl_hf.contract import judge_quality_section
from spl_hf.contract.gates import gate_results
from spl_hf.contract.orderings import name_orderings as ordering_probabilities
from spl_hf.contract.quality import binary_kappa, source_agreement, wilson_interval
from spl_hf.dataset import judge_quality_card
from spl_hf.release.gates import gate_settings
from tests.conftest import REPO


def _scores(judge: str, n: int = 300, seed: int = 0) -> pa.Table:
    """Judgements of ``n`` pairs of one chosen/rejected pool (source_preference 'a' throughout, A the
    pool's chosen). ``good``: consistent, right on about 80% of pairs, mass on the labels; ``biased``:
    prefers the first-shown answer in both orderings, whatever it is."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        for tenet in ("t1", "t2"):
            if judge == "good":
                right = rng.random() < 0.8
                strength = 0.25 + 0.2 * rng.random()
                p_a = 0.5 + strength if right else 0.5 - strength  # P(A better), either ordering
                p1, p2 = p_a, 1 - p_a + rng.uniform(-0.05, 0.05)
            else:
                p1, p2 = 0.6 + 0.3 * rng.random(), 0.6 + 0.3 * rng.random()
            rows.append(
                {
                    "pair_id": f"p{i}",
                    "source": "hh_train",
                    "tenet": tenet,
                    "p_a_first": p1,
                    "p_a_second": p2,
                    "mass_first": 0.9,
                    "mass_second": 0.9,
                    "source_preference": "a",
                }
            )
    return pa.Table.from_pylist(rows)


def _constitution_gates() -> dict:
    from spl_hf.recipes import parse_recipe

    cfg = next(
        c
        for c in parse_recipe(REPO / "recipes" / "tenets" / "constitution_v3.yaml")
        if hasattr(c, "min_rows")
    )
    return {**gate_settings(cfg), "min_rows": 1}


@pytest.mark.parametrize(("judge", "passes"), [("good", True), ("biased", False)])
def test_constitution_v3_gates_pass_a_good_judge_and_stop_a_position_biased_one(judge, passes):
    section = judge_quality_section(_scores(judge), {}, threshold=0.05, capacity=0)
    results = {r.setting: r for r in gate_results(section, 10, _constitution_gates(), [])}
    judge_gates = [
        results[s] for s in ("min_position_consistency", "min_pool_agreement", "min_median_label_mass")
    ]
    if passes:
        assert all(r.passed for r in judge_gates), [r.describe() for r in judge_gates if not r.passed]
    else:
        assert not results["min_position_consistency"].passed and not results["min_pool_agreement"].passed
    (pool,) = section["overall"]["sources"]
    # kappa is degenerate for both (the pool states "a" throughout), and the card says why
    assert (
        pool["kappa"] in (0.0, None)
        and pool["kappa_note"] == "degenerate: the pool prefers side a on every pair"
    )
    card = judge_quality_card(section)
    assert "degenerate" in card["sources"][0]["kappa"]
    assert card["sources"][0]["chance"] == ("no" if passes else "yes")


def test_agreement_is_a_share_with_a_wilson_interval_when_the_pool_side_is_constant():
    # The review's table: kappa is 0 for 50, 90 and 99% agreement and None at 100%; the share is not.
    for agree in (50, 90, 99, 100):
        judge = np.arange(100) < agree
        (a,) = source_agreement(np.array(["hh"] * 100), judge, np.array(["a"] * 100, dtype=object))
        assert a.kappa == binary_kappa(judge, np.ones(100, bool)) and a.kappa in (0.0, None)
        assert a.share == agree / 100 and a.low < a.share <= a.high and a.kappa_note
    low, high = wilson_interval(18, 37)
    assert low < 0.5 < high  # the review's release: 18 of 37 is chance
    assert wilson_interval(0, 0) == (None, None)
    a, b = source_agreement(
        np.array(["x", "x", "y", "y"]),
        np.array([True, False, True, False]),
        np.array(["a", "b", "b", "a"], dtype=object),
    )
    assert a.kappa_note is None and b.kappa == -1.0  # both sides vary: kappa is informative


def test_ordering_probabilities_name_what_each_stored_value_is():
    # p_a_first: P(first better) with A first = P(A better | A first); p_a_second: P(first better) with B first
    got = ordering_probabilities(0.720546, 0.665334)  # the review's F4 judgement
    assert got.p_a_better_a_first == 0.720546 and got.p_a_better_b_first == pytest.approx(0.334666)
    assert got.position_inconsistent  # A when A is first, B when B is first: the first slot won twice
    assert not ordering_probabilities(0.9, 0.2).position_inconsistent  # A twice
    assert not ordering_probabilities(0.1, 0.8).position_inconsistent  # B twice
    assert ordering_probabilities(0.3, 0.3).position_inconsistent  # second slot twice
    assert not ordering_probabilities(0.5, 0.9).position_inconsistent  # 0.5 decides nothing


def test_the_card_counts_position_inconsistent_judgements_per_tenet():
    section = judge_quality_section(_scores("biased", n=20), {}, threshold=0.05, capacity=0)
    card = judge_quality_card(section)
    assert [(r["tenet"], r["inconsistent"]) for r in card["rows"]] == [
        ("t1", "20 (100%)"),
        ("t2", "20 (100%)"),
    ]
    flags = [
        ordering_probabilities(p1, p2).position_inconsistent
        for p1, p2 in zip(
            *(_scores("biased", n=20).column(c).to_pylist() for c in ("p_a_first", "p_a_second"))
        )
    ]
    assert sum(flags) == section["overall"]["position"]["inconsistent"] == 40
