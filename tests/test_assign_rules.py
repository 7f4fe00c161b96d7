"""Saturation strategies, disjointness, determinism and seeded tie-breaking."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from spl_hf.assign import AssignConfig, CostRangeError, assign_tenets, verify_certificate
from spl_hf.assign.synthetic import card_capacity, card_shaped_scores


def rows_table(spec: list[tuple[str, str, str, float]]) -> pa.Table:
    return pa.Table.from_pylist(
        [{"pair_id": a, "prompt_id": q, "tenet": t, "score": s} for a, q, t, s in spec]
    )


def tenet_counts(table: pa.Table) -> dict[str, int]:
    names, counts = np.unique(np.array(table.column("tenet").to_pylist()), return_counts=True)
    return dict(zip(names.tolist(), counts.tolist(), strict=True))


def test_unsaturated_tenet_is_dropped_and_the_rest_resolved() -> None:
    # a and b compete for q1, q2; only a can use q3. Both pools (3 and 2) reach capacity 2, but the three
    # prompts cannot fill four slots, so one tenet stays unsaturated, is dropped, and a re-solve follows.
    table = rows_table(
        [
            ("p1", "q1", "a", 0.6),
            ("p1", "q1", "b", 0.9),
            ("p2", "q2", "a", 0.6),
            ("p2", "q2", "b", 0.9),
            ("p3", "q3", "a", 0.7),
            ("p4", "q4", "c", 0.8),  # pool 1 < capacity: removed before solving
        ]
    )
    r = assign_tenets(table, AssignConfig(capacity=2))
    dropped = {d.tenet: d for d in r.dropped_tenets}
    assert dropped["c"].reason == "pool_below_capacity" and dropped["c"].pool == 1
    # b takes q1, q2 (0.9 each) and a gets only q3: a is unsaturated in the first solve.
    assert dropped["a"].reason == "unsaturated" and dropped["a"].flow == 1 and dropped["a"].solve == 0
    assert r.kept_tenets == ("b",)
    assert tenet_counts(r.assignment) == {"b": 2}
    assert len(r.certificate.solves) == 2
    assert verify_certificate(table, r).ok


TRIANGLE = [
    # Three tenets, three prompts, each tenet eligible on two of them; the optimum gives each tenet one.
    ("p1", "q1", "a", 0.9),
    ("p1", "q1", "c", 0.5),
    ("p2", "q2", "b", 0.9),
    ("p2", "q2", "a", 0.5),
    ("p3", "q3", "c", 0.9),
    ("p3", "q3", "b", 0.5),
]


@pytest.mark.parametrize(
    ("strategy", "kept_count", "solves"),
    [
        ("prefilter+iterate", 0, 1),
        ("iterate", 0, 1),
        ("prefilter+one-at-a-time", 1, 3),
        ("prefilter+bounded", 1, 3),
    ],
)
def test_strategies_differ_when_prompts_are_scarce(strategy: str, kept_count: int, solves: int) -> None:
    table = rows_table(TRIANGLE)
    r = assign_tenets(table, AssignConfig(capacity=2, strategy=strategy))
    assert len(r.kept_tenets) == kept_count
    assert len(r.certificate.solves) == solves
    assert r.certificate.strategy == strategy
    assert all(c == 2 for c in tenet_counts(r.assignment).values())
    assert verify_certificate(table, r).ok


def test_prefilter_and_iterate_agree_on_card_shaped_data() -> None:
    table = card_shaped_scores(3000, seed=3)
    cap = card_capacity(3000)
    pre = assign_tenets(table, AssignConfig(capacity=cap))
    it = assign_tenets(table, AssignConfig(capacity=cap, strategy="iterate"))
    assert pre.kept_tenets == it.kept_tenets and len(pre.kept_tenets) == 49
    assert pre.assignment.equals(it.assignment)
    assert len(pre.certificate.solves) == 1 and len(it.certificate.solves) == 2
    assert {d.reason for d in pre.dropped_tenets} == {"pool_below_capacity"}
    assert {d.reason for d in it.dropped_tenets} == {"unsaturated"}
    assert tenet_counts(pre.assignment) == dict.fromkeys(pre.kept_tenets, cap)
    prompts = pre.assignment.column("prompt_id").to_pylist()
    assert len(set(prompts)) == len(prompts)


def test_same_seed_is_identical_whatever_the_row_order() -> None:
    table = card_shaped_scores(2000, seed=5, decimals=1)
    shuffled = table.take(pa.array(np.random.default_rng(0).permutation(table.num_rows)))
    cfg = AssignConfig(capacity=card_capacity(2000))
    a, b = assign_tenets(table, cfg), assign_tenets(shuffled, cfg)
    assert a.assignment.equals(b.assignment)
    assert a.certificate == b.certificate


def test_other_seed_changes_only_tie_breaks() -> None:
    # Scores rounded to one decimal: many ties, which the seed resolves differently.
    table = card_shaped_scores(2000, seed=5, decimals=1)
    cap = card_capacity(2000)
    a = assign_tenets(table, AssignConfig(capacity=cap, seed=42))
    b = assign_tenets(table, AssignConfig(capacity=cap, seed=43))
    assert a.certificate.objective_levels == b.certificate.objective_levels
    assert a.objective == pytest.approx(b.objective, abs=1e-9)
    assert a.kept_tenets == b.kept_tenets
    assert not a.assignment.equals(b.assignment)
    assert b.certificate.seed == 43 and verify_certificate(table, b).ok


def test_best_pair_of_a_prompt_is_chosen_and_ties_follow_the_seed() -> None:
    # Two pairs of one prompt with the same score for tenet a: the seed picks one, consistently.
    table = rows_table([("x1", "q", "a", 0.8), ("x2", "q", "a", 0.8), ("y", "r", "a", 0.6)])
    picks = {
        seed: assign_tenets(table, AssignConfig(capacity=2, seed=seed))
        .assignment.column("pair_id")
        .to_pylist()
        for seed in range(12)
    }
    assert all(sorted(p) in (["x1", "y"], ["x2", "y"]) for p in picks.values())
    assert len({tuple(p) for p in picks.values()}) == 2
    assert (
        picks[7]
        == assign_tenets(table, AssignConfig(capacity=2, seed=7)).assignment.column("pair_id").to_pylist()
    )


def test_cost_range_overflow_is_a_clear_error() -> None:
    table = card_shaped_scores(200, seed=1)
    with pytest.raises(CostRangeError, match="lower --scale"):
        assign_tenets(table, AssignConfig(capacity=3, scale=10**15))
    with pytest.raises(CostRangeError, match="tie_range"):
        assign_tenets(table, AssignConfig(capacity=3, scale=10**9, tie_range=2**20))
