"""Each pair-pool adapter on its fixture: exact rows, every documented edge case, quarantine reasons."""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from pathlib import Path

import pytest

from spl_hf.sources import OMITTED_MARKER, PAIR_FEATURES, read_pool

FIXTURES = Path(__file__).parent / "fixtures" / "sources"


def reasons(result) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for q in result.quarantine:
        out.setdefault(q.record_index, []).append(q.reason)
    return out


def accounted(result, n_records: int, partners: set[int] = frozenset()) -> None:
    """Every record is a row source, filtered, quarantined or (HelpSteer2) a pair partner."""
    seen = set(result.pairs["record_index"]) | {q.record_index for q in result.quarantine} | set(partners)
    assert result.report.records_read == n_records
    assert len(seen) + result.report.n_filtered == n_records


def test_pku_rows_and_quarantine():
    result = read_pool("pku_train", FIXTURES / "pku_train.jsonl")
    assert result.pairs.features == PAIR_FEATURES
    first = result.pairs[0]
    assert first == {
        "pair_id": "pku_train_0",
        "prompt_id": first["prompt_id"],
        "source": "pku_train",
        "row_id": 0,
        "record_index": 0,
        "prompt": [{"role": "user", "content": "How do I pick a lock?"}],
        "response_a": "I can't help with breaking into places that aren't yours. If you're locked out, "
        "a licensed locksmith can help.",
        "response_b": "Insert a tension wrench, then rake the pins until they set.",
        "source_preference": "a",  # safer_response_id = 0
        "response_a_safe": True,  # the source's safety labels travel with the pair
        "response_b_safe": False,
        "response_a_severity": 0,
        "response_b_severity": 2,
    }
    assert reasons(result) == {
        2: ["identical_responses"],  # differ only in spacing and a trailing newline
        3: ["missing_field"],
        4: ["wrong_type"],
        5: ["bad_value"],
    }
    fields = {q.record_index: q.field for q in result.quarantine}
    assert fields[3] == "response_1" and fields[4] == "safer_response_id"
    assert result.report.quarantined == {
        "identical_responses": 1,
        "missing_field": 1,
        "wrong_type": 1,
        "bad_value": 1,
    }
    accounted(result, 6)


def test_pku_helpfulness_preference_option():
    result = read_pool("pku_train", FIXTURES / "pku_train.jsonl", pku_preference="better")
    # records 4 and 5 only had a malformed safer_response_id; their better_response_id is valid
    assert result.pairs["source_preference"] == ["b", "a", "b", "a"]
    assert result.pairs["record_index"] == [0, 1, 4, 5]


def test_hh_native_transcript_and_edge_cases():
    result = read_pool("hh_train", FIXTURES / "hh_harmless_train.jsonl.gz")
    rows = {r["record_index"]: r for r in result.pairs}
    assert set(rows) == {0, 1, 4, 7}
    assert rows[0]["prompt"] == [{"role": "user", "content": "Human: How do I pick a lock?"}]
    # multi-turn history stays native; irregular spacing ("  ", "\n") after Assistant: is trimmed
    assert rows[1]["prompt"][0]["content"] == (
        "Human: My neighbour's dog barks all night.\n\nAssistant: That sounds exhausting."
        "\n\nHuman: How can I make it stop for good?"
    )
    assert (
        rows[1]["response_a"] == "Talk to your neighbour first, then contact animal control if it continues."
    )
    assert rows[1]["response_b"] == "You could poison it."
    # a reply that itself contains "Human:" is kept whole
    assert rows[4]["response_a"] == "Human: Hello there.\nRobot: Greetings."
    # ... also when the reply runs on into an imagined "\n\nHuman:" turn
    assert rows[7]["prompt"][0]["content"] == "Human: Say goodbye."
    assert rows[7]["response_a"] == "Goodbye!\n\nHuman: see you"
    assert all(r["source_preference"] == "a" for r in rows.values())
    assert reasons(result) == {
        2: ["hh_prefix_mismatch"],
        3: ["empty_response"],
        5: ["hh_no_assistant_turn"],
        6: ["wrong_type"],
    }
    # the transcript is not empty, its final reply is: the detail says which (real-data review D6)
    [empty] = [q for q in result.quarantine if q.record_index == 3]
    assert empty.detail == "the final assistant reply of 'rejected' is empty"
    accounted(result, 8)


def test_ultrafeedback_final_assistant_turn_and_tie():
    result = read_pool("ultrafeedback_train", FIXTURES / "ultrafeedback_train.jsonl")
    assert result.pairs["response_a"] == [
        "If it's your own lock, a pick set and tension wrench are the usual tools.",
        "Red, yellow and blue.",
    ]
    assert result.pairs["source_preference"] == ["a", "tie"]  # equal scores are a tie
    assert reasons(result) == {2: ["bad_role_sequence"], 3: ["wrong_type"]}
    accounted(result, 4)


def test_helpsteer2_preference_layout():
    result = read_pool("helpsteer2_train", FIXTURES / "helpsteer2_preference.jsonl")
    assert result.pairs["record_index"] == [0, 1, 2, 5]
    assert result.pairs["source_preference"] == ["a", "b", "tie", "a"]
    assert result.report.filtered == {"split_validation": 1}
    assert reasons(result) == {4: ["bad_value"]}
    assert result.quarantine[0].field == "preference_strength"
    # <extra_id_1> multi-turn prompt becomes the shared User:/Assistant: transcript
    assert result.pairs[3]["prompt"][0]["content"] == (
        "User: I want to learn Python.\nAssistant: Great! What would you like to build?\nUser: A small web scraper."
    )
    accounted(result, 6)


def test_helpsteer2_default_layout_pairs_consecutive_rows():
    result = read_pool("helpsteer2_train", FIXTURES / "helpsteer2_default.jsonl")
    assert result.pairs["record_index"] == [0, 2, 5]
    assert result.pairs["source_preference"] == ["a", "tie", "b"]  # helpfulness 3>1, 3=3, 2<3
    assert (
        result.pairs[2]["response_a"] == "Miso."
        and result.pairs[2]["response_b"] == "Pepper, because it is playful."
    )
    assert reasons(result) == {4: ["unpaired_row"]}
    accounted(result, 7, partners={1, 3, 6})


EXPECTED_CA_PAIRS = [("a", "b"), ("a", "c"), ("a", "d"), ("b", "c"), ("b", "d"), ("c", "d")]


def test_community_alignment_first_turn_all_pairs():
    result = read_pool("community_alignment_en", FIXTURES / "community_alignment.csv")
    first = result.pairs.filter(lambda r: r["record_index"] == 0)
    candidates = {
        "a": "Pasta with garlic.",
        "b": "A stir-fry with whatever vegetables you have.",
        "c": "How about a simple omelette?",
        "d": "Order takeout.",
    }
    assert [(r["response_a"], r["response_b"]) for r in first] == [
        (candidates[x], candidates[y]) for x, y in EXPECTED_CA_PAIRS
    ]
    # preferred is c: the pairs holding c say which side; the others carry no source preference
    assert first["source_preference"] == [None, "b", None, "b", None, "a"]
    assert Counter(result.pairs["record_index"]) == {0: 6, 1: 3, 3: 6, 4: 6, 6: 6}
    # record 1: candidate d is "EMPTY STRING" -> one quarantine entry for it, its 3 pairs not formed
    assert reasons(result) == {1: ["empty_response"], 5: ["bad_value"]}
    assert result.quarantine[0].field == "first_turn_response_d"
    assert result.report.filtered == {"language_fr": 1}
    # pregenerated prompt shared by records 0 and 6 -> one prompt id
    ids = {r["record_index"]: r["prompt_id"] for r in result.pairs}
    assert ids[0] == ids[6]
    assert result.report.distinct_prompts == 4
    accounted(result, 7)


def documented_draw(seed: int, key: str, turn: int, others: str) -> str:
    """The partner draw as the ca_en_mt_p1 docs state it, recomputed independently."""
    return others[int(hashlib.sha256(f"{seed}:{key}:{turn}".encode()).hexdigest()[:16], 16) % len(others)]


def test_community_alignment_later_turns_representative_pair():
    # the fixture's partners, derived from the documented rule: conversation 100 turn 2 prefers b
    # (others a, c, d); conversation 103 turn 2 prefers a (b is the same text, others c, d) and
    # turn 3 prefers d (others a, b, c)
    assert documented_draw(42, "100", 2, "acd") == "a"
    assert documented_draw(42, "103", 2, "cd") == "c"
    assert documented_draw(42, "103", 3, "abc") == "a"
    result = read_pool("ca_en_mt_p1", FIXTURES / "community_alignment.csv")
    rows = list(result.pairs)
    assert [r["record_index"] for r in rows] == [0, 3, 3]
    assert rows[0]["prompt"][0]["content"] == (
        "User: What should I cook tonight?\nAssistant: How about a simple omelette?\nUser: I have no eggs."
    )
    assert (rows[0]["response_a"], rows[0]["response_b"], rows[0]["source_preference"]) == (
        "Then try pasta.",
        "Make a quesadilla with cheese and tortillas.",
        "b",
    )
    assert (rows[1]["response_a"], rows[1]["response_b"], rows[1]["source_preference"]) == (
        "Two weeks is comfortable.",
        "Ten days covers the highlights.",
        "a",
    )
    # turn 3's history carries each earlier turn's preferred response
    assert rows[2]["prompt"][0]["content"] == (
        "User: Help me plan a trip to Japan.\nAssistant: Visit in spring for cherry blossoms.\n"
        "User: How long should I stay?\nAssistant: Two weeks is comfortable.\nUser: What about budget?"
    )
    assert rows[2]["source_preference"] == "b"  # preferred d against partner a
    assert reasons(result) == {4: ["turn_gap"], 5: ["bad_value"]}
    assert result.report.filtered == {"language_fr": 1, "no_later_turns": 2}
    accounted(result, 7)


def test_community_alignment_nan_cells_from_parquet(tmp_path):
    import pandas as pd

    frame = pd.read_csv(FIXTURES / "community_alignment.csv")  # empty cells become NaN floats
    assert frame["third_turn_prompt"].isna().any()
    path = tmp_path / "ca.parquet"
    frame.to_parquet(path)
    from_csv = read_pool("ca_en_mt_p1", FIXTURES / "community_alignment.csv")
    from_parquet = read_pool("ca_en_mt_p1", path)
    assert from_parquet.pairs.to_list() == from_csv.pairs.to_list()
    assert from_parquet.report.quarantined == from_csv.report.quarantined


def test_wildfeedback_single_and_multi_turn_split():
    single = read_pool("wildfeedback_st", FIXTURES / "wildfeedback.json")
    multi = read_pool("wf_mt", FIXTURES / "wildfeedback.json", clip_chars=None)
    assert single.pairs["record_index"] == [0, 7]
    assert single.pairs[0]["prompt"] == [{"role": "user", "content": "How do I pick a lock?"}]
    # record 7 wraps each reply in a one-message list (the other reading of the schema)
    assert (single.pairs[1]["response_a"], single.pairs[1]["response_b"]) == ("Teal.", "Blue.")
    assert reasons(single) == {4: ["empty_response"], 5: ["identical_responses"]}
    assert multi.pairs["record_index"] == [1, 2]
    assert multi.pairs[0]["prompt"][0]["content"] == (
        "User: Recommend a sci-fi novel.\nAssistant: Try 'The Left Hand of Darkness'.\nUser: Something shorter?"
    )
    assert multi.pairs[0]["response_a"] == "'The Invention of Morel' is short and strange."
    assert reasons(multi) == {3: ["bad_role_sequence"], 6: ["bad_role_sequence"]}
    # each record is in exactly one of the two pools (or quarantined by the pool it belongs to)
    assert single.report.filtered == {"multi_turn": 4} and multi.report.filtered == {"single_turn": 4}
    accounted(single, 8)
    accounted(multi, 8)


def test_wildfeedback_multi_turn_clipping():
    clipped = read_pool("wf_mt", FIXTURES / "wildfeedback.json", clip_chars=400)
    text = clipped.pairs[1]["prompt"][0]["content"]
    # the 300-char opening exchange is dropped whole; the later exchange and final question remain
    assert text == f"{OMITTED_MARKER}\nUser: {'C' * 100}\nAssistant: {'D' * 100}\nUser: What now?"
    assert len(text) <= 400
    assert clipped.report.clipped_prompts == 1
    assert clipped.pairs[0]["prompt"] == read_pool("wf_mt", FIXTURES / "wildfeedback.json").pairs[0]["prompt"]


@pytest.mark.parametrize("source", ["ca_en_mt_p1", "wf_mt", "helpsteer2_train"])
def test_clip_budget_changes_the_display_not_the_prompt_id(source):
    path = {
        "ca_en_mt_p1": "community_alignment.csv",
        "wf_mt": "wildfeedback.json",
        "helpsteer2_train": "helpsteer2_preference.jsonl",
    }[source]
    tight = read_pool(source, FIXTURES / path, clip_chars=60)
    loose = read_pool(source, FIXTURES / path, clip_chars=None)
    assert tight.pairs["pair_id"] == loose.pairs["pair_id"]
    for t, lo in zip(tight.pairs, loose.pairs, strict=True):
        clipped = t["prompt"][0]["content"].startswith(OMITTED_MARKER)
        assert clipped == (t["prompt"] != lo["prompt"])
        assert t["prompt_id"] == lo["prompt_id"]  # the id is the conversation's, whatever is displayed
        assert (t["response_a"], t["response_b"]) == (lo["response_a"], lo["response_b"])
    assert tight.report.clipped_prompts >= 1


def ca_record(conversation_id: int, preferred: str, n_turns: int = 2) -> dict:
    record = {"conversation_id": conversation_id, "assigned_lang": "en"}
    for number, ordinal in enumerate(("first", "second", "third", "fourth"), start=1):
        later = number <= n_turns
        record[f"{ordinal}_turn_prompt"] = f"{ordinal} question {conversation_id}" if later else None
        for x in "abcd":
            record[f"{ordinal}_turn_response_{x}"] = (
                f"{ordinal} answer {x} {conversation_id}" if later else None
            )
        record[f"{ordinal}_turn_preferred_response"] = f"response_{preferred}" if later else None
    return record


def test_representative_draw_depends_on_item_and_seed_not_file_order(tmp_path):
    records = [ca_record(i, "abcd"[i % 4]) for i in range(40)]
    shuffled = records[:]
    random.Random(0).shuffle(shuffled)
    paths = []
    for name, rows in (("ordered", records), ("shuffled", shuffled)):
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        paths.append(path)

    def picks(path, seed=42):
        pairs = read_pool("ca_en_mt_p1", path, pair_seed=seed).pairs
        return {(r["response_a"], r["response_b"], r["source_preference"]) for r in pairs}

    assert picks(paths[0]) == picks(paths[1])
    assert picks(paths[0]) != picks(paths[0], seed=7)
    partners: Counter[str] = Counter()
    pairs = read_pool("ca_en_mt_p1", paths[0]).pairs
    assert pairs["record_index"] == list(range(40))
    for record, row in zip(records, pairs, strict=True):
        preferred = record["second_turn_preferred_response"][-1]
        winner, other = (
            (row["response_a"], row["response_b"])
            if row["source_preference"] == "a"
            else (row["response_b"], row["response_a"])
        )
        assert winner.split()[2] == preferred  # "second answer <letter> <id>"
        others = "".join(x for x in "abcd" if x != preferred)
        assert other.split()[2] == documented_draw(42, str(record["conversation_id"]), 2, others)
        partners[other.split()[2]] += 1
    assert len(partners) == 4  # every letter gets drawn as a partner somewhere


def test_community_alignment_history_and_partner_problems(tmp_path):
    no_preference = ca_record(1, "a", n_turns=3)
    no_preference["second_turn_preferred_response"] = "EMPTY STRING"
    no_partner = ca_record(2, "b")
    for x in "acd":
        no_partner[f"second_turn_response_{x}"] = no_partner["second_turn_response_b"]
    path = tmp_path / "ca.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in (no_preference, no_partner, ca_record(3, "c"))))
    result = read_pool("ca_en_mt_p1", path)
    assert result.pairs["record_index"] == [2]
    got = [(q.record_index, q.field, q.reason) for q in result.quarantine]
    assert got == [
        (0, "second_turn_preferred_response", "missing_preference"),
        (0, "second_turn_preferred_response", "missing_context"),  # turn 3 has no turn-2 reply to show
        (1, "second_turn_response_b", "no_valid_partner"),
    ]
    assert result.quarantine[1].detail.startswith("turn 3 lacks its history")


def test_hh_replies_with_embedded_turns_are_pairs_real_mismatches_are_not():
    result = read_pool("hh_train", FIXTURES / "hh_embedded_turns.jsonl")
    rows = {r["record_index"]: r for r in result.pairs}
    assert reasons(result) == {3: ["hh_prefix_mismatch"], 4: ["hh_prefix_mismatch"]}
    assert set(rows) == {0, 1, 2, 5}
    # everything after the point where the sides part is the reply, embedded markers included
    assert rows[0]["prompt"][0]["content"] == "Human: Write a short play about a robot."
    assert rows[0]["response_a"] == "Sure.\n\nHuman: Hello robot.\n\nAssistant: Hello human."
    assert rows[0]["response_b"] == "No."
    assert rows[1]["response_b"] == "5.\n\nAssistant: Sorry, I meant 4."
    assert (rows[2]["response_a"], rows[2]["response_b"]) == (
        "Hi!\n\nHuman: hi back\n\nAssistant: Nice.",
        "Go away.\n\nHuman: rude\n\nAssistant: Whatever.",
    )
    assert rows[5]["prompt"][0]["content"] == (
        "Human: I feel lonely.\n\nAssistant: I'm sorry to hear that.\n\nHuman: What should I do?"
    )
    assert rows[5]["response_a"] == "Call a friend.\n\nHuman: thanks\n\nAssistant: You're welcome."
    assert "turn 2 differs" in next(q.detail for q in result.quarantine if q.record_index == 3)
    accounted(result, 6)


def test_hh_prompt_id_is_that_of_the_turn_list():
    from spl_hf.sources import prompt_id

    hh = {r["record_index"]: r for r in read_pool("hh_train", FIXTURES / "hh_harmless_train.jsonl.gz").pairs}
    # the display keeps the native "Human: …" transcript, the id is the conversation's
    assert hh[0]["prompt"][0]["content"] == "Human: How do I pick a lock?"
    assert hh[0]["prompt_id"] == prompt_id("How do I pick a lock?")
    assert hh[1]["prompt_id"] == prompt_id(
        [
            ("user", "My neighbour's dog barks all night."),
            ("assistant", "That sounds exhausting."),
            ("user", "How can I make it stop for good?"),
        ]
    )
    # ... so the same question in PKU-SafeRLHF is the same prompt
    pku = read_pool("pku_train", FIXTURES / "pku_train.jsonl").pairs
    assert pku[0]["prompt_id"] == hh[0]["prompt_id"]


def pku_record(i: int, safe0: object = True, safe1: object = False, **extra) -> dict:
    return {
        "prompt": f"question {i}",
        "response_0": f"answer {i} a",
        "response_1": f"answer {i} b",
        "is_response_0_safe": safe0,
        "is_response_1_safe": safe1,
        "response_0_severity_level": 0 if safe0 else 2,
        "response_1_severity_level": 0 if safe1 else 3,
        "safer_response_id": 0,
        "better_response_id": 1,
        **extra,
    }


def test_pku_safety_labels_and_both_unsafe_filter(tmp_path):
    rows = [
        pku_record(0),
        pku_record(1, False, False),
        pku_record(2, True, True),
        pku_record(3, "true", "false"),  # CSV-style flags
        pku_record(4, is_response_1_safe=None, response_1_severity_level=None),
        pku_record(5, safe0=1),  # not a boolean
        pku_record(6, response_1_severity_level=4),
    ]
    path = tmp_path / "pku.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    kept = read_pool("pku_train", path)
    assert kept.pairs["record_index"] == [0, 1, 2, 3, 4]
    assert kept.pairs["response_a_safe"] == [True, False, True, True, True]
    assert kept.pairs["response_b_safe"] == [False, False, True, False, None]
    assert kept.pairs["response_b_severity"] == [3, 3, 0, 0, None]  # record 3 keeps its own levels
    assert reasons(kept) == {5: ["wrong_type"], 6: ["bad_value"]}
    assert {q.record_index: q.field for q in kept.quarantine} == {
        5: "is_response_0_safe",
        6: "response_1_severity_level",
    }

    dropped = read_pool("pku_train", path, pku_drop_both_unsafe=True)
    assert dropped.pairs["record_index"] == [0, 2, 3]
    assert dropped.report.filtered == {"both_unsafe": 1}
    # a pair the filter cannot check is quarantined, not kept unchecked
    assert reasons(dropped) == {4: ["missing_field"], 5: ["wrong_type"], 6: ["bad_value"]}
    accounted(dropped, 7)
    # other pools have no safety labels: the columns are null there
    hh = read_pool("hh_train", FIXTURES / "hh_harmless_train.jsonl.gz").pairs
    assert set(hh["response_a_safe"]) == {None} and set(hh["response_b_severity"]) == {None}
