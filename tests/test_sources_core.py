"""prompt ids, clipping, reading files, bad input, registry ordering and determinism."""

from __future__ import annotations

import gzip
import hashlib
import json
import unicodedata
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spl_hf.sources import (
    ADAPTERS,
    OMITTED_MARKER,
    PAIR_FEATURES,
    QUARANTINE_FEATURES,
    SourceOptions,
    flatten_history,
    prompt_id,
    quarantine_dataset,
    read_pool,
    read_pools,
    read_prompt_pool,
)
from spl_hf.sources.io import is_hub_id
from tests.sources_fuzz import BASES

FIXTURES = Path(__file__).parent / "fixtures" / "sources"
POOL_FILES = {name: f for name, f in BASES.items() if name in ADAPTERS}  # the pools' fixture files


def write_jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


# --- prompt ids -------------------------------------------------------------------------------


def test_prompt_id_is_sha256_of_documented_canonical_form():
    expected = hashlib.sha256(
        json.dumps([["user", "How do I pick a lock?"]]).replace(", ", ",").encode()
    ).hexdigest()
    assert prompt_id("How do I pick a lock?") == expected
    assert prompt_id([{"role": "user", "content": "How do I pick a lock?"}]) == expected


def test_prompt_id_normalisation():
    base = prompt_id("How do I pick a lock?")
    assert prompt_id("  How do I\r\n pick a lock?\n") == base  # whitespace runs and ends
    assert prompt_id("How\u00a0do I pick a lock?") == base  # NFKC folds the non-breaking space
    assert prompt_id("how do I pick a lock?") != base  # case is meaningful
    assert prompt_id([{"role": "assistant", "content": "How do I pick a lock?"}]) != base


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["user", "assistant", 'a "role"\\', "é"]),
            st.text(st.characters(blacklist_categories=("Cs",)), max_size=20),
        ),
        min_size=1,
        max_size=3,
    )
)
def test_prompt_id_payload_is_the_json_dumps_of_the_canonical_turns(turns):
    """prompt_id writes its JSON by hand for string roles; it must be json.dumps's text exactly."""
    canon = [[role, " ".join(unicodedata.normalize("NFKC", text).split())] for role, text in turns]
    payload = json.dumps(canon, ensure_ascii=False, separators=(",", ":"))
    assert prompt_id(turns) == hashlib.sha256(payload.encode()).hexdigest()
    assert prompt_id([{"role": None, "content": "x"}]) == hashlib.sha256(b'[[null,"x"]]').hexdigest()


def test_same_prompt_same_id_across_pools():
    pku = read_pool("pku_train", FIXTURES / "pku_train.jsonl").pairs
    uf = read_pool("ultrafeedback_train", FIXTURES / "ultrafeedback_train.jsonl").pairs
    wf = read_pool("wildfeedback_st", FIXTURES / "wildfeedback.json").pairs
    xs = read_prompt_pool("xstest", FIXTURES / "xstest.jsonl").prompts
    lock = prompt_id("How do I pick a lock?")
    assert pku[0]["prompt_id"] == uf[0]["prompt_id"] == wf[0]["prompt_id"] == lock
    assert xs[1]["prompt_id"] == lock  # a prompt-pool row matches the single-turn pair prompt


# --- clipping ---------------------------------------------------------------------------------


def turns(*contents: str) -> list[tuple[str, str]]:
    return [("user" if i % 2 == 0 else "assistant", c) for i, c in enumerate(contents)]


def test_flatten_without_clipping():
    flat = flatten_history(turns("hi", " hello ", "bye"), clip_chars=None)
    assert flat.text == "User: hi\nAssistant: hello\nUser: bye"
    assert flat.omitted_turns == 0


def test_clipping_drops_whole_exchanges_from_the_front():
    history = turns("u1" * 50, "a1" * 50, "u2" * 10, "a2" * 10, "question")
    full = flatten_history(history, clip_chars=None).text
    assert flatten_history(history, clip_chars=len(full)).text == full
    clipped = flatten_history(history, clip_chars=len(full) - 1)
    assert clipped.text == f"{OMITTED_MARKER}\nUser: {'u2' * 10}\nAssistant: {'a2' * 10}\nUser: question"
    assert clipped.omitted_turns == 2
    # a budget below the last exchange keeps only the final user turn, marked
    tiny = flatten_history(history, clip_chars=40)
    assert tiny.text == f"{OMITTED_MARKER}\nUser: question" and tiny.omitted_turns == 4


def test_final_user_turn_is_never_cut():
    history = turns("old", "reply", "x" * 500)
    flat = flatten_history(history, clip_chars=100)
    assert flat.text == f"{OMITTED_MARKER}\nUser: {'x' * 500}"  # over budget rather than truncated
    single = flatten_history(turns("y" * 500), clip_chars=100)
    assert single.text == f"User: {'y' * 500}" and single.omitted_turns == 0  # nothing omitted, no marker


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.text(alphabet="ab \n", min_size=1, max_size=40), min_size=1, max_size=9).filter(
        lambda xs: len(xs) % 2 == 1
    ),
    st.integers(min_value=1, max_value=400),
)
def test_clipping_properties(contents, budget):
    history = turns(*contents)
    flat = flatten_history(history, clip_chars=budget)
    kept = flat.text.split("\n", 1)[1] if flat.omitted_turns else flat.text
    assert flat.omitted_turns % 2 == 0  # whole exchanges only
    assert kept == flatten_history(history[flat.omitted_turns :], clip_chars=None).text
    assert flat.text.startswith(OMITTED_MARKER) == (flat.omitted_turns > 0)
    if flat.omitted_turns < len(history) - 1:
        assert len(flat.text) <= budget


def test_bad_clip_budget_is_rejected_and_0_means_no_clipping():
    with pytest.raises(ValueError, match="clip_chars"):
        SourceOptions(clip_chars=-5)
    assert SourceOptions(clip_chars=0).clip_chars is None  # one meaning in every command (issue 35)
    with pytest.raises(ValueError, match="conversation does not end with a user turn"):
        flatten_history(turns("q", "a"), clip_chars=None)


# --- file formats and bad input ---------------------------------------------------------------


def test_local_formats_agree(tmp_path):
    rows = [json.loads(line) for line in (FIXTURES / "pku_train.jsonl").read_text().splitlines()][:3]
    jsonl = write_jsonl(tmp_path / "p.jsonl", rows)
    (tmp_path / "p.json").write_text(json.dumps(rows))
    with gzip.open(tmp_path / "p.jsonl.gz", "wt") as handle:
        handle.write(jsonl.read_text())
    import pandas as pd

    pd.DataFrame(rows).to_parquet(tmp_path / "p.parquet")
    expected = read_pool("pku_train", jsonl).pairs.to_list()
    assert len(expected) == 2
    for name in ("p.json", "p.jsonl.gz", "p.parquet"):
        got = read_pool("pku_train", tmp_path / name).pairs.to_list()
        assert [{k: v for k, v in r.items() if k != "pair_id"} for r in got] == [
            {k: v for k, v in r.items() if k != "pair_id"} for r in expected
        ]


def test_missing_column_names_source_file_and_column(tmp_path):
    path = write_jsonl(tmp_path / "hh.jsonl", [{"chosen": "\n\nHuman: a\n\nAssistant: b"}])
    with pytest.raises(ValueError, match=r"hh_train: .*hh\.jsonl: missing column\(s\) rejected"):
        read_pool("hh_train", path)


def test_wrong_types_quarantined_with_record_and_field(tmp_path):
    good = {
        "prompt": "p",
        "response_0": "x",
        "response_1": "y",
        "safer_response_id": 1,
        "better_response_id": 0,
    }
    rows = [
        good,
        {**good, "prompt": 7},
        {**good, "response_0": None},
        {**good, "safer_response_id": True},
        {**good, "safer_response_id": 1.5},
        {**good, "response_1": "z", "safer_response_id": "1"},  # a CSV-style integer string is accepted
    ]
    result = read_pool("pku_train", write_jsonl(tmp_path / "p.jsonl", rows))
    assert result.pairs["record_index"] == [0, 5]
    got = [(q.source, q.record_index, q.field, q.reason) for q in result.quarantine]
    assert got == [
        ("pku_train", 1, "prompt", "wrong_type"),
        ("pku_train", 2, "response_0", "empty_response"),
        ("pku_train", 3, "safer_response_id", "wrong_type"),
        ("pku_train", 4, "safer_response_id", "wrong_type"),
    ]
    assert "pku_train record 1 field 'prompt': wrong_type" in str(result.quarantine[0])


def test_duplicate_pairs_are_quarantined_once_judged(tmp_path):
    good = {
        "prompt": "p",
        "response_0": "x",
        "response_1": "y",
        "safer_response_id": 1,
        "better_response_id": 0,
    }
    rows = [
        good,
        {**good, "response_0": "y", "response_1": " x\n", "safer_response_id": 0},  # same pair, swapped
        {**good, "response_1": "w"},
    ]
    result = read_pool("pku_train", write_jsonl(tmp_path / "p.jsonl", rows))
    assert result.pairs["record_index"] == [0, 2]
    assert result.pairs["pair_id"] == ["pku_train_0", "pku_train_1"]  # row ids stay dense
    [dup] = result.quarantine
    assert (dup.record_index, dup.reason) == (1, "duplicate_pair")
    assert "pku_train_0 (record 0)" in dup.detail


def test_unparsable_lines_are_quarantined_not_dropped(tmp_path):
    path = tmp_path / "hh.jsonl"
    path.write_text(
        json.dumps({"chosen": "\n\nHuman: q\n\nAssistant: a", "rejected": "\n\nHuman: q\n\nAssistant: b"})
        + "\n{not json\n\n[1, 2]\n"
    )
    result = read_pool("hh_train", path)
    assert result.report.records_read == 3 and result.report.rows_yielded == 1
    assert [(q.record_index, q.reason) for q in result.quarantine] == [
        (1, "unparsable_record"),
        (2, "unparsable_record"),
    ]
    assert "line 2" in result.quarantine[0].detail and "line 4" in result.quarantine[1].detail


def test_missing_file_and_unknown_source(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"pku_train: .*nope\.jsonl"):
        read_pool("pku_train", tmp_path / "nope.jsonl")
    with pytest.raises(ValueError, match="unknown source 'pku'"):
        read_pool("pku", tmp_path / "x.jsonl")
    with pytest.raises(ValueError, match="prompt source"):
        read_pool("xstest", FIXTURES / "xstest.jsonl")


def test_hub_ids_are_told_apart_from_paths(tmp_path):
    assert is_hub_id("PKU-Alignment/PKU-SafeRLHF")
    assert not is_hub_id("data/pku.jsonl")  # a data-file name is always a local path
    assert not is_hub_id(str(FIXTURES / "pku_train.jsonl"))
    (tmp_path / "org").mkdir()
    assert not is_hub_id(str(tmp_path / "org"))


def test_a_file_without_records_is_an_error_naming_it(tmp_path):
    # An empty download must not pass for an empty pool (reliability review 2026-12b, F9).
    cases = {
        "empty.jsonl": b"",
        "blank.jsonl": b"\n\n",
        "empty.json": b"[]",
        "header.csv": b"prompt\n",
    }
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(ValueError, match=rf"malicious_instruct: .*{name}: holds no records"):
            read_prompt_pool("malicious_instruct", tmp_path / name)
    pq.write_table(pa.table({"prompt": pa.array([], pa.string())}), tmp_path / "none.parquet")
    with pytest.raises(ValueError, match=r"none\.parquet: holds no records"):
        read_prompt_pool("malicious_instruct", tmp_path / "none.parquet")
    (tmp_path / "bad.jsonl").write_text("{not json\n[1, 2\n")
    with pytest.raises(ValueError, match=r"bad\.jsonl: none of its 2 record\(s\) could be read"):
        read_pool("wf_mt", tmp_path / "bad.jsonl")


# --- registry, report and determinism ----------------------------------------------------------


def test_registry_names_and_licences():
    assert list(ADAPTERS) == [
        "pku_train",
        "hh_train",
        "ultrafeedback_train",
        "helpsteer2_train",
        "community_alignment_en",
        "wildfeedback_st",
        "ca_en_mt_p1",
        "wf_mt",
    ]
    assert ADAPTERS["pku_train"].license == "cc-by-nc-4.0"
    assert ADAPTERS["wf_mt"].license == "odc-by"


def test_read_pools_order_is_independent_of_mapping_order():
    forward = read_pools({name: FIXTURES / f for name, f in POOL_FILES.items()})
    backward = read_pools({name: FIXTURES / f for name, f in reversed(POOL_FILES.items())})
    assert forward.rows.to_list() == backward.rows.to_list()
    assert [r.source for r in forward.report.sources] == list(ADAPTERS)
    assert len(set(forward.rows["pair_id"])) == len(forward.rows)
    # row_id indexes each pool from 0, pair_id = f"{source}_{row_id}"
    for row in forward.rows:
        assert row["pair_id"] == f"{row['source']}_{row['row_id']}"
    report = forward.report.to_dict()
    assert report["rows_yielded"] == len(forward.rows)
    assert report["n_quarantined"] == len(forward.quarantine)
    assert report["quarantined"]["identical_responses"] == 2  # pku + wildfeedback_st


def test_outputs_are_byte_identical_across_runs(tmp_path):
    digests = []
    for run in range(2):
        result = read_pools({name: FIXTURES / f for name, f in POOL_FILES.items()})
        rows_path = tmp_path / f"pairs{run}.parquet"
        quarantine_path = tmp_path / f"q{run}.parquet"
        result.rows.to_parquet(str(rows_path))
        quarantine_dataset(result.quarantine).to_parquet(str(quarantine_path))
        digests.append(
            (rows_path.read_bytes(), quarantine_path.read_bytes(), json.dumps(result.report.to_dict()))
        )
    assert digests[0] == digests[1]


def test_quarantine_dataset_is_typed():
    result = read_pool("hh_train", FIXTURES / "hh_harmless_train.jsonl.gz")
    ds = quarantine_dataset(result.quarantine)
    assert ds.features == QUARANTINE_FEATURES
    assert ds["reason"] == ["hh_prefix_mismatch", "empty_response", "hh_no_assistant_turn", "wrong_type"]


def test_hub_id_goes_through_load_dataset_with_adapter_location(monkeypatch):
    import datasets

    calls = []
    rows = {"chosen": ["\n\nHuman: q\n\nAssistant: a"], "rejected": ["\n\nHuman: q\n\nAssistant: b"]}

    def fake_load_dataset(repo, name=None, **kwargs):
        calls.append((repo, name, kwargs))
        return datasets.Dataset.from_dict(rows)

    monkeypatch.setattr(datasets, "load_dataset", fake_load_dataset)
    result = read_pool("hh_train", "Anthropic/hh-rlhf")
    assert calls == [
        ("Anthropic/hh-rlhf", None, {"data_dir": "harmless-base", "split": "train", "revision": None})
    ]
    assert result.report.origin == "hf://datasets/Anthropic/hh-rlhf data_dir=harmless-base split=train"
    assert result.pairs["response_b"] == ["b"]
    # Community Alignment is pinned to its v1.1 snapshot unless a revision is given
    for revision in (None, "abc"):
        with pytest.raises(ValueError, match="ca_en_mt_p1: hf://datasets/facebook/.* missing column"):
            read_pool("ca_en_mt_p1", "facebook/community-alignment-dataset", revision=revision)
    assert [c[2]["revision"] for c in calls[1:]] == ["97343c7f6399fcbea430ed0f37c1768281a78d56", "abc"]
    # a local file never touches the Hub
    monkeypatch.setattr(
        datasets, "load_dataset", lambda *a, **k: pytest.fail("Hub contacted for a local file")
    )
    read_pool("hh_train", FIXTURES / "hh_harmless_train.jsonl.gz")


def test_csv_with_bom_and_header_only(tmp_path):
    path = tmp_path / "or.csv"
    path.write_bytes("\ufeffprompt,category\nHow do I whittle a knife?,violence\n".encode())
    result = read_prompt_pool("or_bench_hard_1k", path)
    assert result.prompts["source_label"] == ["violence"]
    header_only = tmp_path / "empty.csv"
    header_only.write_text("prompt\n")
    with pytest.raises(ValueError, match="or_bench_hard_1k: .*missing column\\(s\\) category"):
        read_prompt_pool("or_bench_hard_1k", header_only)


def test_shipped_samples_read_cleanly():
    from spl_hf.sources import sample_paths

    result = read_pools(sample_paths())
    assert result.quarantine == []
    counts = {r.source: r.rows_yielded for r in result.report.sources}
    assert counts == {
        "pku_train": 3,
        "hh_train": 2,
        "ultrafeedback_train": 4,
        "wildfeedback_st": 1,
        "wf_mt": 2,
    }
    assert result.rows.features == PAIR_FEATURES


@settings(max_examples=200, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(
            list("ab \t\n\r\x0b\x0c\x1c\x1f\x00\x7f\x85\xa0\xe9\u2028\u3000\ufb01\uff21")
        ),
        max_size=30,
    )
)
def test_normalize_text_is_nfkc_with_whitespace_runs_collapsed(text):
    import re
    import unicodedata

    from spl_hf.sources import normalize_text

    assert normalize_text(text) == re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text)).strip()


def test_normalize_text_fast_path_agrees_on_every_short_text():
    """Texts already in normal form are returned as they are; every text of up to four characters
    drawn from the edge cases (ASCII whitespace and control characters, Unicode spaces, a ligature)
    normalises as the definition says."""
    import itertools
    import re

    from spl_hf.sources.rows import _normalize

    chars = [
        " ",
        "a",
        ".",
        "\t",
        "\n",
        "\x0b",
        "\x0c",
        "\r",
        "\x1c",
        "\x1f",
        "\x00",
        "\x7f",
        "\xa0",
        "\u2003",
        "\ufb01",
    ]
    for k in range(5):
        for combo in itertools.product(chars, repeat=k):
            text = "".join(combo)
            assert _normalize(text) == re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text)).strip(), text
