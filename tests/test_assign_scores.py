"""Bad score tables and configurations fail with errors that name the offending rows."""

from __future__ import annotations

import math

import pyarrow as pa
import pytest

from spl_hf.assign import AssignConfig, ScoresError, assign_tenets, encode_scores


def table(rows: list[tuple]) -> pa.Table:
    return pa.Table.from_pylist(
        [dict(zip(("pair_id", "prompt_id", "tenet", "score"), r, strict=True)) for r in rows]
    )


GOOD = [("p1", "q1", "a", 0.9), ("p2", "q2", "a", -0.7), ("p2", "q2", "b", 0.1)]


def test_valid_table_is_encoded_in_sorted_order() -> None:
    st = encode_scores(table([GOOD[2], GOOD[0], GOOD[1]]))
    assert st.pair_ids.to_pylist() == ["p1", "p2"] and st.tenets == ("a", "b")
    assert st.pair.tolist() == [1, 0, 1] and st.tenet.tolist() == [1, 0, 0]


def test_missing_columns_are_named() -> None:
    t = table(GOOD).drop_columns(["prompt_id", "score"])
    with pytest.raises(ScoresError, match=r"missing column\(s\) \['prompt_id', 'score'\]"):
        encode_scores(t, source="scores.parquet")


def test_duplicate_pair_tenet_rows_are_named() -> None:
    with pytest.raises(ScoresError) as err:
        encode_scores(table([*GOOD, ("p1", "q1", "a", 0.8)]), source="s.jsonl")
    msg = str(err.value)
    assert msg.startswith("s.jsonl: 2 row(s) repeat a (pair_id, tenet)")
    assert "row 0 (pair_id='p1'" in msg and "row 3 (pair_id='p1'" in msg


@pytest.mark.parametrize("bad", [math.nan, 1.5, -1.0000001, math.inf])
def test_nan_and_out_of_range_scores_are_named(bad: float) -> None:
    with pytest.raises(
        ScoresError, match=r"1 row\(s\) with a NaN or out-of-range score .* row 1 \(pair_id='p2'"
    ):
        encode_scores(table([GOOD[0], ("p2", "q2", "a", bad), GOOD[2]]))


def test_pair_with_two_prompts_is_named() -> None:
    with pytest.raises(ScoresError) as err:
        encode_scores(table([GOOD[0], ("p2", "q2", "a", 0.7), ("p2", "q9", "b", 0.6)]))
    msg = str(err.value)
    assert "2 row(s) give a pair_id more than one prompt_id" in msg
    assert "row 1 (pair_id='p2', prompt_id='q2'" in msg and "row 2 (pair_id='p2', prompt_id='q9'" in msg


def test_missing_values_are_named() -> None:
    with pytest.raises(ScoresError, match=r"1 row\(s\) with a missing prompt_id: row 1 "):
        encode_scores(table([GOOD[0], ("p2", None, "a", 0.7)]))


def test_every_problem_is_reported_at_once() -> None:
    with pytest.raises(ScoresError) as err:
        encode_scores(table([("p1", "q1", "a", 2.0), ("p1", "q1", "a", 0.9)]))
    assert "out-of-range" in str(err.value) and "repeat a (pair_id, tenet)" in str(err.value)


def test_long_listings_are_truncated_with_a_count() -> None:
    rows = [(f"p{i}", f"q{i}", "a", 3.0) for i in range(25)]
    with pytest.raises(ScoresError, match=r"25 row\(s\) .* and 15 more"):
        encode_scores(table(rows))


def test_wrong_column_types_are_named() -> None:
    t = pa.table({"pair_id": [1.5], "prompt_id": ["q"], "tenet": ["a"], "score": [0.5]})
    with pytest.raises(ScoresError, match="'pair_id' must hold strings or integers"):
        encode_scores(t)


def test_integer_ids_are_accepted() -> None:
    t = pa.table({"pair_id": [10, 2], "prompt_id": [1, 1], "tenet": ["a", "a"], "score": [0.9, 0.8]})
    r = assign_tenets(t, AssignConfig(capacity=1))
    assert r.assignment.column("pair_id").to_pylist() == [10]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"capacity": 0}, "capacity must be a positive integer"),
        ({"capacity": -3}, "capacity must be a positive integer"),
        ({"capacity": 2, "threshold": 1.5}, "threshold"),
        ({"capacity": 2, "solver": "gurobi"}, "solver"),
        ({"capacity": 2, "strategy": "greedy"}, "strategy"),
        ({"capacity": 2, "seed": -1}, "seed"),
    ],
)
def test_bad_config_is_rejected(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        AssignConfig(**kwargs)


def test_zero_threshold_is_rejected_because_ties_would_be_eligible():
    import pytest

    from spl_hf.assign import AssignConfig

    with pytest.raises(ValueError, match=r"threshold must be in \(0, 1\]"):
        AssignConfig(capacity=1, threshold=0.0)
