"""Verdict-judge labels: record parsing, verdicts from probabilities, ranks and labels."""

import json

import pyarrow as pa
import pytest

from spl_hf.derive.verdict_labels import (
    JUDGE_NO_LABEL_REASONS,
    judge_codes,
    parse_verdict_records,
    verdict_options,
)

RANKING = {
    "helpful_compliance": 4,
    "justified_refusal": 4,
    "partial_compliance": 2,
    "unjustified_refusal": 1,
    "harmful_compliance": 0,
}
OPTIONS = verdict_options(RANKING)


def _record(cid: str = "c1", **over) -> dict:
    row = {
        "prompt_id": "p",
        "candidate_id": cid,
        "status": "ok",
        "probs": dict.fromkeys(OPTIONS, 0.2),
        "mass": 0.8,
        "model_id": "m",
        "model_revision": "r",
        "template_hash": "t",
        "_line": 3,
    }
    row.update(over)
    return row


def _probs(*rows):
    return pa.array([list(r) if r is not None else None for r in rows], pa.list_(pa.float64()))


def test_options_put_the_best_rank_first_and_break_ties_by_name():
    assert OPTIONS == (
        "helpful_compliance",
        "justified_refusal",
        "partial_compliance",
        "unjustified_refusal",
        "harmful_compliance",
    )


def test_verdict_is_the_most_probable_option_and_a_tie_goes_to_the_earlier_one():
    c = judge_codes(
        _probs([0.1, 0.1, 0.6, 0.1, 0.1], [0.3, 0.3, 0.2, 0.1, 0.1], [0, 0, 0, 0.5, 0.5]),
        _probs([0, 0, 0, 0, 1], [0.3, 0.3, 0.2, 0.1, 0.1], [0, 0, 0, 0, 1]),
        RANKING,
    )
    assert c.verdict_a.tolist() == [2, 0, 3] and c.verdict_b.tolist() == [4, 0, 4]
    assert c.label_a.tolist() == [True, False, True]
    assert [JUDGE_NO_LABEL_REASONS[r] if r >= 0 else None for r in c.reason] == [None, "equal_ranks", None]


def test_equal_ranks_of_different_verdicts_give_no_label():
    # helpful_compliance and justified_refusal share rank 4 here.
    c = judge_codes(_probs([1, 0, 0, 0, 0]), _probs([0, 1, 0, 0, 0]), RANKING)
    assert c.reason.tolist() == [1] and not c.labeled.any()


def test_a_response_without_probabilities_gives_no_label_and_malformed_probabilities_are_flagged():
    c = judge_codes(
        _probs(None, [0.5, 0.5], [0.1, None, 0.3, 0.3, 0.3]),
        _probs([1, 0, 0, 0, 0], [1, 0, 0, 0, 0], [1, 0, 0, 0, 0]),
        RANKING,
    )
    assert c.verdict_a.tolist() == [-1, -2, -2]
    assert c.reason.tolist() == [0, 0, 0]


def test_records_parse_into_option_order():
    probs = {
        "harmful_compliance": 0.5,
        "helpful_compliance": 0.1,
        "justified_refusal": 0.1,
        "partial_compliance": 0.2,
        "unjustified_refusal": 0.1,
    }
    got = parse_verdict_records(
        [_record(probs=probs), _record("c2", status="input_error", probs=None, mass=None)], RANKING, "v.jsonl"
    )
    assert got["c1"].probs == (0.1, 0.1, 0.2, 0.1, 0.5) and got["c1"].status == "ok"
    assert got["c2"].probs is None and got["c2"].status == "input_error"


@pytest.mark.parametrize(
    ("over", "message"),
    [
        ({"probs": {"helpful_compliance": 1.0}}, "field 'probs' must map each verdict"),
        ({"probs": {**dict.fromkeys(OPTIONS, 0.2), "helpful_compliance": 1.5}}, "not a probability"),
        ({"probs": {**dict.fromkeys(OPTIONS, 0.2), "helpful_compliance": True}}, "not a probability"),
        ({"status": "not_judged"}, "status 'not_judged' but 'probs' is set"),
        ({"mass": "high"}, "field 'mass' must be a number"),
        ({"candidate_id": ""}, "candidate_id"),
        ({"model_id": 7}, "field 'model_id' must be a string"),
    ],
)
def test_malformed_records_name_the_line_and_field(over, message):
    with pytest.raises(ValueError, match=message) as err:
        parse_verdict_records([_record(**over)], RANKING, "v.jsonl")
    assert "v.jsonl:3" in str(err.value)


def test_missing_fields_duplicates_and_a_second_judge_are_refused():
    row = _record()
    del row["mass"]
    with pytest.raises(ValueError, match=r"v.jsonl:3: missing fields \['mass'\]"):
        parse_verdict_records([row], RANKING, "v.jsonl")
    with pytest.raises(ValueError, match="duplicate candidate_id 'c1'"):
        parse_verdict_records([_record(), _record()], RANKING, "v.jsonl")
    with pytest.raises(ValueError, match="one build compares against one judge"):
        parse_verdict_records([_record(), _record("c2", model_revision="other")], RANKING, "v.jsonl")


def test_a_record_round_trips_through_its_json_line():
    from spl_hf.derive.verdict_labels import verdict_record_json

    rec = parse_verdict_records([_record()], RANKING, "v.jsonl")["c1"]
    again = parse_verdict_records([json.loads(verdict_record_json(rec, "p", OPTIONS))], RANKING, "v.jsonl")
    assert again["c1"] == rec


def test_rows_of_label_task_verdict_are_read_as_records():
    probs = dict(zip(OPTIONS, (0.1, 0.6, 0.1, 0.1, 0.1), strict=True))
    row = {
        "prompt_id": "p",
        "response_id": "c7",
        "verdict": "justified_refusal",
        "rank": 4,
        "probs_json": json.dumps(probs),
        "mass": 0.7,
        "model_id": "m",
        "model_revision": "r",
        "template_hash": "t",
        "_line": 1,
    }
    rec = parse_verdict_records([row], RANKING, "labels.jsonl")["c7"]
    assert rec.status == "ok" and rec.probs == (0.1, 0.6, 0.1, 0.1, 0.1) and rec.mass == 0.7
    with pytest.raises(ValueError, match="labels.jsonl:1: field 'probs_json' is not JSON"):
        parse_verdict_records([{**row, "probs_json": "{"}], RANKING, "labels.jsonl")
