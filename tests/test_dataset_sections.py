import pyarrow as pa

from spl_hf.dataset.sections import (
    HARMFUL_PROMPT_POOLS,
    MULTI_TURN_POOLS,
    markdown_table,
    multi_turn_share,
    shares,
    source_origins,
    stage_table,
)
from spl_hf.sources import ADAPTERS, PROMPT_SOURCES


def test_a_hub_read_is_linked_at_its_revision_with_its_subset():
    reports = [
        {
            "source": "hh_train",
            "role": "source",
            "origin": "hf://datasets/Anthropic/hh-rlhf data_dir=harmless-base split=train revision=abc123",
        },
        {
            "source": "pku_train",
            "role": "source",
            "origin": "hf://datasets/PKU-Alignment/PKU-SafeRLHF split=train",
        },
        {"source": "hh_train", "role": "heldout", "origin": "other.csv", "sha256": "f" * 64},
    ]
    hh, pku = source_origins(reports, ["hh_train", "pku_train"])
    assert hh["where"] == "[Anthropic/hh-rlhf](https://huggingface.co/datasets/Anthropic/hh-rlhf/tree/abc123)"
    assert hh["subset"] == "data_dir `harmless-base`" and hh["revision"] == "`abc123`"
    assert pku["revision"] == "not pinned"  # read from the Hub without a revision: said, not invented
    assert "harmless-base" in hh["what is taken"]  # what the adapter takes from the pool


def test_a_local_file_is_named_by_file_name_and_sha256():
    (row,) = source_origins([{"source": "xstest", "origin": "xstest.jsonl", "sha256": "ab" * 32}], ["xstest"])
    assert row["where"] == "local file `xstest.jsonl`" and row["revision"] == f"sha256 `{'ab' * 32}`"


def test_stage_counts_are_unknown_without_a_record_and_totalled_with_one():
    table = pa.table({"source": ["a", "a", "b"], "prompt_id": ["p1", "p1", "p2"]})
    rows = stage_table(["a", "b"], None, [("in build", table)])
    assert rows[0]["read"] == "–" and rows[0]["in build"] == "2 (1)" and rows[-1]["in build"] == "3 (2)"
    summary = {
        "sources": [
            {"source": s, "rows_yielded": n, "distinct_prompts": n, "n_quarantined": 1, "n_filtered": 0}
            for s, n in (("a", 5), ("b", 4))
        ],
        "removed_by_source": {"a": 2},
        "drawn": {"a": 3},
    }
    rows = stage_table(["a", "b"], summary, [("in build", table)])
    assert [rows[-1][k] for k in ("read", "quarantined", "decontaminated", "drawn")] == [
        "9 (9)",
        "2",
        "2",
        "3",
    ]
    assert rows[1]["decontaminated"] == "0" and rows[1]["drawn"] == "0"


def test_shares_largest_first_and_an_empty_table_becomes_its_sentence():
    assert [r["source"] for r in shares({"b": 1, "a": 3})] == ["`a`", "`b`"]
    assert shares({"b": 1, "a": 3})[0]["share"] == "75.0%"
    assert multi_turn_share({"wf_mt": 1, "hh_train": 3})["share"] == "25.0%"
    assert markdown_table([], empty="Nothing was released.") == "Nothing was released."


def test_the_named_pools_are_adapters():
    assert not (HARMFUL_PROMPT_POOLS | MULTI_TURN_POOLS) - set(ADAPTERS) - set(PROMPT_SOURCES)


def test_shares_and_the_multi_turn_share_reproduce_the_v3_cards_table():
    v3 = {  # the v3 card's "Rows per source" (rows and share)
        "ultrafeedback_train": (54_730, "27.9%"),
        "ca_en_mt_p1": (41_540, "21.2%"),
        "hh_train": (35_172, "17.9%"),
        "pku_train": (29_207, "14.9%"),
        "wf_mt": (12_804, "6.5%"),
        "community_alignment_en": (9_203, "4.7%"),
        "helpsteer2_train": (7_755, "4.0%"),
        "wildfeedback_st": (5_589, "2.9%"),
    }
    rows = shares({s: n for s, (n, _) in reversed(v3.items())})
    assert [(r["source"], r["rows"], r["share"]) for r in rows] == [
        (f"`{s}`", f"{n:,}", share) for s, (n, share) in v3.items()
    ]
    mt = multi_turn_share({s: n for s, (n, _) in v3.items()})
    assert mt["pools"] == ["ca_en_mt_p1", "wf_mt"] and mt["share"] == "27.7%"  # the card: "~28% of rows"
