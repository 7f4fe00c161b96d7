"""Damaged input is loud: duplicate keys and columns, and a .jsonl cut mid-record (review N8)."""

from __future__ import annotations

import gzip
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spl_hf.cli import main
from spl_hf.errors import SplHfError
from spl_hf.sources import read_prompt_pool

GOOD = {"prompt": "How do tides work?"}


def _lines(*records: str) -> str:
    return "".join(r + "\n" for r in records)


def test_a_duplicate_json_key_quarantines_the_record(tmp_path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text(_lines(json.dumps(GOOD), '{"prompt": "first", "prompt": "DUPLICATE override"}'))
    prompts, quarantine, report = read_prompt_pool("ultrachat", path)
    assert prompts["prompt"] == [GOOD["prompt"]]
    assert [(q.record_index, q.field, q.reason) for q in quarantine] == [(1, "prompt", "duplicate_key")]
    assert "line 2" in quarantine[0].detail and report.records_read == 2


def test_a_duplicate_key_in_a_json_list_item_or_nested_object(tmp_path) -> None:
    path = tmp_path / "p.json"
    nested = '{"prompt": "x", "meta": {"a": 1, "a": 2}}'
    path.write_text(f'[{json.dumps(GOOD)}, {{"prompt": "a", "prompt": "b"}}, {nested}]')
    prompts, quarantine, _ = read_prompt_pool("ultrachat", path)
    assert prompts.num_rows == 1
    assert [(q.record_index, q.reason) for q in quarantine] == [(1, "duplicate_key"), (2, "duplicate_key")]


def test_a_duplicate_key_in_a_columnar_json_fails_the_file(tmp_path) -> None:
    path = tmp_path / "cols.json"
    path.write_text('{"prompt": ["a"], "prompt": ["b"]}')
    with pytest.raises(SplHfError, match=r"cols.json: the JSON document: the key 'prompt' appears twice"):
        read_prompt_pool("ultrachat", path)


@pytest.mark.parametrize("header", ["prompt,prompt", "prompt,category,prompt"])
def test_a_duplicated_csv_header_fails_the_file(tmp_path, capsys, header) -> None:
    path = tmp_path / "dup.csv"
    cells = ",".join(["x"] * len(header.split(",")))
    path.write_text(f"{header}\n{cells}\n")
    out = tmp_path / "out"
    assert (
        main(["sources", "read", "--source", "or_bench_80k", "--path", str(path), "--output_dir", str(out)])
        == 2
    )
    err = capsys.readouterr().err
    assert f"{path}: the CSV header names column 'prompt' twice" in err
    assert not (out / "prompts.parquet").exists()


def test_a_duplicated_parquet_column_fails_the_file(tmp_path) -> None:
    path = tmp_path / "dup.parquet"
    table = pa.Table.from_arrays([pa.array(["first"]), pa.array(["second text"])], names=["prompt", "prompt"])
    pq.write_table(table, path)
    with pytest.raises(SplHfError, match="names column 'prompt' twice"):
        read_prompt_pool("ultrachat", path)


def test_a_jsonl_cut_in_its_last_record_is_file_damage(tmp_path, capsys) -> None:
    whole = _lines(json.dumps(GOOD), json.dumps({"prompt": "What is a lever?"}))
    path = tmp_path / "cut.jsonl"
    path.write_text(whole[: whole.index("lever")])  # no trailing newline, cut mid-string
    out = tmp_path / "out"
    argv = ["sources", "read", "--source", "ultrachat", "--path", str(path), "--output_dir", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"ultrachat: {path}: incomplete file: cut.jsonl: the last line has no newline" in err
    assert "accept_partial" in err and not out.exists()
    # as for a cut .gz, accept_partial keeps the head and marks the source partial
    assert main([*argv, "--accept_partial"]) == 0
    report = json.loads((out / "report.json").read_text())
    assert (
        report["partial"] and report["rows_yielded"] == 1 and report["quarantined"] == {"truncated_file": 1}
    )


def test_a_cut_multibyte_character_at_the_end_is_a_cut_too(tmp_path) -> None:
    data = (json.dumps(GOOD) + "\n" + '{"prompt": "caf\u00e9').encode()[:-1]
    path = tmp_path / "cut.jsonl"
    path.write_bytes(data)
    with pytest.raises(SplHfError, match="incomplete file"):
        read_prompt_pool("ultrachat", path)


def test_a_last_line_without_newline_that_parses_is_kept(tmp_path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps(GOOD) + "\n" + json.dumps({"prompt": "What is a lever?"}))
    prompts, quarantine, report = read_prompt_pool("ultrachat", path)
    assert prompts.num_rows == 2 and not quarantine and not report.partial


def test_a_bad_line_in_the_middle_stays_a_quarantined_record(tmp_path) -> None:
    path = tmp_path / "p.jsonl.gz"
    path.write_bytes(
        gzip.compress(_lines(json.dumps(GOOD), '{"prompt": "unterminated', json.dumps(GOOD)).encode())
    )
    _, quarantine, report = read_prompt_pool("ultrachat", path)
    assert [q.reason for q in quarantine] == ["unparsable_record", "duplicate_prompt"]
    assert not report.partial
