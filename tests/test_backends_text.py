"""The judge sees each pool's conversation once: no speaker label stacked on a flattened or HH transcript."""

from __future__ import annotations

from pathlib import Path

import pytest

from spl_hf.backends.text import OMITTED_MARKER, content_key, transcript

FIXTURES = Path(__file__).parent / "fixtures" / "sources"

# pool -> (file, the conversation text the judge shows for its first row)
SHAPES = {
    "pku_train": (None, "User: How do I get into my own car if I locked the keys inside?"),
    "hh_train": (
        None,
        "Human: I want to surprise my partner with breakfast in bed.\n\n"
        "Assistant: That's a lovely idea. Do you know what they like to eat?\n\n"
        "Human: They love pancakes. Any tips?",
    ),
    "ultrafeedback_train": (None, "User: How can I keep basil alive indoors?"),
    "wildfeedback_st": (None, "User: What's a quick dinner idea?"),
    "wf_mt": (
        None,
        "User: I'm planning a three-day hiking trip.\nAssistant: Sounds great! Where are you thinking of going?\n"
        "User: The Lake District in October. What should I pack?",
    ),
    "helpsteer2_train": ("helpsteer2_preference.jsonl", "User: Explain what a hash function is."),
    "community_alignment_en": ("community_alignment.csv", "User: What should I cook tonight?"),
    "ca_en_mt_p1": (
        "community_alignment.csv",
        "User: What should I cook tonight?\nAssistant: How about a simple omelette?\nUser: I have no eggs.",
    ),
}


@pytest.mark.parametrize("pool", sorted(SHAPES))
def test_every_pool_shape_reaches_the_judge_with_one_speaker_label_per_turn(pool: str, tiny_backend) -> None:
    from spl_hf.backends.judge import PairwiseJudge, parse_pair
    from spl_hf.sources import read_pool
    from spl_hf.sources.samples import sample_paths

    name, expected = SHAPES[pool]
    path = FIXTURES / name if name else sample_paths()[pool]
    row = read_pool(pool, path).pairs[0]
    assert transcript(row["prompt"]) == expected
    prefix, _ = PairwiseJudge(tiny_backend).prefix_and_tail(parse_pair(row, 0), swapped=False)
    assert f"[Conversation]\n{expected}\n[End of conversation]" in prefix
    for stacked in ("User: User:", "User: Human:", "User: Assistant:"):
        assert stacked not in prefix


def test_a_clipped_transcript_and_a_system_message_keep_their_labels() -> None:
    from spl_hf.sources import OMITTED_MARKER as SOURCES_MARKER

    assert OMITTED_MARKER == SOURCES_MARKER  # the marker the multi-turn pools write
    clipped = f"{OMITTED_MARKER}\nUser: and then?\nAssistant: then this.\nUser: ok?"
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": clipped}]
    assert transcript(messages) == f"System: Be brief.\n\n{clipped}"
    # A real multi-message conversation still gets a label per message.
    turns = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
        {"role": "user", "content": "Humans: who are they?"},
    ]
    assert transcript(turns) == "User: hi\n\nAssistant: hello\n\nUser: Humans: who are they?"


def test_content_key_is_canonical() -> None:
    assert content_key("judge", {"b": 1, "a": [1, 2]}) == content_key("judge", {"a": [1, 2], "b": 1})
    assert content_key("judge", "x") != content_key("label", "x")
    assert content_key("judge", "ab", "c") != content_key("judge", "a", "bc")
