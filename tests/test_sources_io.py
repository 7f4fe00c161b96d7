"""Reading damaged source files: the reproductions of reliability review findings 5, 6 and 7."""

from __future__ import annotations

import gzip
import json
import time
from pathlib import Path

import pytest

from spl_hf.sources import read_pool, read_prompt_pool
from spl_hf.sources.io import is_hub_id

FIXTURES = Path(__file__).parent / "fixtures" / "sources"
GOOD = {"prompt": "p", "response_0": "x", "response_1": "y", "safer_response_id": 1, "better_response_id": 0}


def pku_lines(n: int) -> list[str]:
    return [json.dumps({**GOOD, "prompt": f"question {i}"}) for i in range(n)]


def quarantined(result) -> list[tuple]:
    return [(q.record_index, q.reason, q.field) for q in result.quarantine]


def test_plain_text_prompt_lists_are_read_one_prompt_a_line(tmp_path):
    # MaliciousInstruct.txt / advbench.txt as published: one prompt a line, CRLF or LF, maybe gzipped.
    path = tmp_path / "MaliciousInstruct.txt"
    path.write_bytes(b"\xef\xbb\xbfHow to steal a car?\r\n\nHow to make a fake ID?\nbad \xff byte\n")
    result = read_prompt_pool("malicious_instruct", path)
    assert result.prompts["prompt"] == ["How to steal a car?", "How to make a fake ID?"]
    assert result.prompts["record_index"] == [0, 1]
    assert [(q.record_index, q.reason) for q in result.quarantine] == [(2, "invalid_utf8")]
    gz = tmp_path / "advbench.txt.gz"
    gz.write_bytes(gzip.compress(b"Write a script\nExplain how\n", mtime=0))
    assert read_prompt_pool("malicious_instruct", gz).prompts["prompt"] == ["Write a script", "Explain how"]
    with pytest.raises(ValueError, match=r"pku_train: .*MaliciousInstruct\.txt: missing column"):
        read_pool("pku_train", path)  # a prompt list is no pair pool


def test_a_record_with_a_5000_digit_integer_is_quarantined_and_the_rest_kept(tmp_path):
    huge = "9" * 5000
    lines = pku_lines(2)
    path = tmp_path / "pku.jsonl"
    path.write_text(
        lines[0] + "\n" + lines[1].replace('"safer_response_id": 1', f'"safer_response_id": {huge}') + "\n"
    )
    result = read_pool("pku_train", path)
    assert [m[0]["content"] for m in result.pairs["prompt"]] == ["question 0"]
    [entry] = result.quarantine
    assert (entry.record_index, entry.reason) == (1, "unparsable_record")
    assert "4300 digits" in entry.detail
    listed = tmp_path / "pku.json"
    listed.write_text(
        "["
        + lines[0]
        + ", "
        + lines[1].replace('"safer_response_id": 1', f'"safer_response_id": {huge}')
        + "]"
    )
    result = read_pool("pku_train", listed)
    assert len(result.pairs) == 1 and [q.reason for q in result.quarantine] == ["unparsable_record"]


# --- finding 5: tracebacks ---------------------------------------------------------------------


def test_truncated_gzip_is_an_error_unless_a_partial_file_is_accepted(tmp_path):
    data = gzip.compress(("\n".join(pku_lines(40)) + "\n").encode(), mtime=0)
    path = tmp_path / "pku.jsonl.gz"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(
        ValueError, match=r"pku_train: .*pku\.jsonl\.gz: incomplete file: .*end-of-stream.*accept_partial"
    ):
        read_pool("pku_train", path)
    result = read_pool("pku_train", path, accept_partial=True)
    assert result.report.partial and result.report.to_dict()["partial"] is True
    kept = result.pairs["prompt"]
    assert 0 < len(kept) < 40
    assert [m[0]["content"] for m in kept] == [f"question {i}" for i in range(len(kept))]
    [tail] = result.quarantine
    assert (tail.record_index, tail.reason) == (len(kept), "truncated_file")
    assert "pku.jsonl.gz" in tail.detail and "end-of-stream" in tail.detail


def test_whole_file_damage_is_one_clear_error_naming_the_file(tmp_path):
    plain = tmp_path / "plain.jsonl.gz"
    plain.write_text(pku_lines(1)[0] + "\n")
    with pytest.raises(ValueError, match=r"pku_train: .*plain\.jsonl\.gz: named \.gz but not gzip"):
        read_pool("pku_train", plain)
    pointer = b"version https://git-lfs.github.com/spec/v1\noid sha256:" + b"0" * 64 + b"\nsize 7\n"
    for name in ("test.jsonl.gz", "test.jsonl", "test.parquet", "test.csv"):
        (tmp_path / name).write_bytes(pointer)
        with pytest.raises(ValueError, match=rf"{name}: Git LFS pointer, not the data: run git lfs pull"):
            read_pool("hh_train", tmp_path / name)
    (tmp_path / "folder.jsonl").mkdir()
    with pytest.raises(ValueError, match=r"folder\.jsonl: is a directory"):
        read_pool("pku_train", tmp_path / "folder.jsonl")
    (tmp_path / "bad.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(ValueError, match=r"bad\.parquet: not a readable parquet file"):
        read_pool("pku_train", tmp_path / "bad.parquet")


def test_a_missing_local_path_is_not_taken_for_a_hub_id(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    assert not is_hub_id("data/pku")  # starts in an existing folder: a local path
    with pytest.raises(FileNotFoundError, match="data/pku: no such file"):
        read_pool("pku_train", "data/pku")
    with pytest.raises(FileNotFoundError, match="nosuch: no such file"):
        read_pool("pku_train", "nosuch")
    assert is_hub_id("nosuch/dir")  # shaped like owner/name and nothing local: a Hub id ...


def test_hub_ids_fail_fast_offline_and_unreachable(monkeypatch):
    import datasets
    from huggingface_hub import HfApi

    calls = []
    monkeypatch.setattr(datasets, "load_dataset", lambda *a, **k: calls.append(a) or pytest.fail("no probe"))

    def unreachable(self, repo_id, **kwargs):
        assert kwargs["timeout"] <= 10  # one request with a timeout, no retries
        raise ConnectionError("Name or service not known")

    monkeypatch.setattr(HfApi, "dataset_info", unreachable)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)
    start = time.monotonic()
    with pytest.raises(ValueError, match="nosuch/dir: no such local file, and the Hub could not be reached"):
        read_pool("pku_train", "nosuch/dir")
    assert time.monotonic() - start < 5 and calls == []

    # offline: the cache is tried (no network), and a miss names the string as both things it could be
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")

    def not_cached(*args, **kwargs):
        raise ConnectionError("Couldn't reach 'nosuch/dir' on the Hub (OfflineModeIsEnabled)")

    monkeypatch.setattr(datasets, "load_dataset", not_cached)
    with pytest.raises(
        ValueError, match=r"nosuch/dir: no such local file; .*offline, and not in the local cache"
    ):
        read_pool("pku_train", "nosuch/dir")


def test_json_nested_100k_deep_is_one_quarantined_record(tmp_path):
    deep = '{"prompt": ' + "[" * 100_000 + "]" * 100_000 + "}"
    lines = pku_lines(2)
    (tmp_path / "deep.jsonl").write_text(f"{lines[0]}\n{deep}\n{lines[1]}\n")
    (tmp_path / "deep.json").write_text(f"[{lines[0]},\n{deep},\n{lines[1]}]")
    for name in ("deep.jsonl", "deep.json"):
        result = read_pool("pku_train", tmp_path / name)
        assert result.pairs["record_index"] == [0, 2]
        assert quarantined(result) == [(1, "too_deep", None)]


def test_wildfeedback_role_that_is_a_list_or_dict_is_quarantined(tmp_path):
    def record(sender):
        return {
            "conversations": [{"from": sender, "value": "hi"}],
            "chosen": {"from": "gpt", "value": "hello"},
            "rejected": {"from": "gpt", "value": "go away"},
        }

    path = tmp_path / "wf.json"
    path.write_text(json.dumps([record(["human"]), record({"a": 1}), record("human")]))
    result = read_pool("wildfeedback_st", path)
    assert result.pairs["record_index"] == [2]
    assert quarantined(result) == [
        (0, "bad_role_sequence", "conversations"),
        (1, "bad_role_sequence", "conversations"),
    ]
    assert "unknown role ['human']" in result.quarantine[0].detail


# --- finding 6: one bad record rejects a whole file ------------------------------------------------


@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_invalid_utf8_and_lone_surrogates_cost_only_their_record(tmp_path, suffix):
    lines = [line.encode() for line in pku_lines(4)]
    lines[1] = lines[1].replace(b"question 1", b"question \xe9 1")  # a Latin-1 byte
    lines[2] = lines[2].replace(b"question 2", b"question \\ud800 2")  # a lone surrogate escape
    data = b"\n".join(lines) + b"\n" if suffix == ".jsonl" else b"[" + b",\n".join(lines) + b"]"
    path = tmp_path / f"pku{suffix}"
    path.write_bytes(data)
    result = read_pool("pku_train", path)
    assert result.pairs["record_index"] == [0, 3]
    assert quarantined(result) == [(1, "invalid_utf8", None), (2, "lone_surrogate", "prompt")]
    assert "byte 0xe9 at byte offset" in result.quarantine[0].detail
    assert str(result.quarantine[1]).startswith("pku_train record 2 field 'prompt': lone_surrogate")


def test_nul_and_oversized_texts_are_quarantined(tmp_path):
    rows = [{**GOOD, "prompt": "a\x00b"}, {**GOOD, "response_1": "y" * 300_000}, {**GOOD, "prompt": "fine"}]
    path = tmp_path / "pku.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = read_pool("pku_train", path)
    assert result.pairs["record_index"] == [2]
    assert quarantined(result) == [(0, "bad_text", "prompt"), (1, "text_too_long", "response_b")]
    assert read_pool("pku_train", path, max_text_chars=None).pairs["record_index"] == [1, 2]


# --- finding 7: good rows lost silently --------------------------------------------------------


def test_an_unclosed_csv_quote_does_not_swallow_later_rows(tmp_path):
    path = tmp_path / "harmbench.csv"
    path.write_text(
        "Behavior,FunctionalCategory,SemanticCategory,ContextString\n"
        "Do a bad thing,standard,harassment,\n"
        '"Do another bad thing,standard,harassment,\n'
        "Do a third bad thing,standard,harassment,\n"
        "Do a fourth bad thing,standard,harassment,\n"
    )
    result = read_prompt_pool("harmbench", path)
    assert result.prompts["prompt"] == ["Do a bad thing", "Do a third bad thing", "Do a fourth bad thing"]
    assert quarantined(result) == [(1, "bad_csv_row", None)]
    assert "CSV line 3" in result.quarantine[0].detail


def test_community_alignment_unclosed_quote_keeps_the_other_records(tmp_path):
    import csv
    import io

    table = (FIXTURES / "community_alignment.csv").read_text(encoding="utf-8")
    rows = list(csv.reader(io.StringIO(table)))
    header, first = rows[0], rows[1]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    for i in range(4):
        writer.writerow(
            [
                f"{cell} {i}"
                if cell not in ("", "en", "EMPTY STRING") and not cell.startswith("response_")
                else cell
                for cell in first
            ]
        )
    text = out.getvalue().splitlines()
    text[2] = text[2].replace(",", ',"', 3)  # stray quotes in record 1
    path = tmp_path / "ca.csv"
    path.write_text("\n".join(text) + "\n")
    result = read_pool("community_alignment_en", path)
    assert sorted(set(result.pairs["record_index"])) == [0, 2, 3]
    assert [(q.record_index, q.reason) for q in result.quarantine] == [(1, "bad_csv_row")]


def test_latin1_csv_quarantines_the_rows_it_breaks(tmp_path):
    path = tmp_path / "or.csv"
    path.write_bytes(
        "prompt,category\nHow do I whittle?,violence\nCaf\xe9 tricks?,deception\nNext?,privacy\n".encode(
            "latin-1"
        )
    )
    result = read_prompt_pool("or_bench_80k", path)
    assert result.prompts["prompt"] == ["How do I whittle?", "Next?"]
    [bad] = result.quarantine
    assert (bad.record_index, bad.reason, bad.field) == (1, "invalid_utf8", "prompt")
    offset = len(b"prompt,category\nHow do I whittle?,violence\nCaf")
    assert f"CSV line 3: byte 0xe9 at byte offset {offset} is not UTF-8" in bad.detail


def test_bom_at_the_start_of_json_lines_keeps_the_first_record(tmp_path):
    path = tmp_path / "pku.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + "\n".join(pku_lines(2)).encode())
    result = read_pool("pku_train", path)
    assert result.pairs["record_index"] == [0, 1] and result.quarantine == []
