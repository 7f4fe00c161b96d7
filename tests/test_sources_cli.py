"""`spl-hf sources read|list`."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from spl_hf.cli import main
from spl_hf.sources import OMITTED_MARKER

FIXTURES = Path(__file__).parent / "fixtures" / "sources"


def test_read_writes_pairs_quarantine_and_report(tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["sources", "read", "--source", "wf_mt", "--path", str(FIXTURES / "wildfeedback.json")]
    code = main([*argv, "--clip_chars", "400", "--output_dir", str(out), "--json"])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["source"] == "wf_mt" and report["rows_yielded"] == 2 and report["clipped_prompts"] == 1
    table = pq.read_table(out / "pairs.parquet")
    assert table.column_names == [
        "pair_id",
        "prompt_id",
        "source",
        "row_id",
        "record_index",
        "prompt",
        "response_a",
        "response_b",
        "source_preference",
        "response_a_safe",
        "response_b_safe",
        "response_a_severity",
        "response_b_severity",
    ]
    assert table.column("prompt").to_pylist()[1][0]["content"].startswith(OMITTED_MARKER)
    quarantine = [json.loads(line) for line in (out / "quarantine.jsonl").read_text().splitlines()]
    assert [(q["record_index"], q["reason"]) for q in quarantine] == [
        (3, "bad_role_sequence"),
        (6, "bad_role_sequence"),
    ]
    assert json.loads((out / "report.json").read_text()) == report

    # --clip_chars 0 turns clipping off
    main([*argv, "--clip_chars", "0", "--output_dir", str(tmp_path / "noclip"), "--json"])
    assert json.loads(capsys.readouterr().out)["clipped_prompts"] == 0


def test_read_prompt_source(tmp_path, capsys):
    code = main(
        [
            "sources",
            "read",
            "--source",
            "xstest",
            "--path",
            str(FIXTURES / "xstest.jsonl"),
            "--output_dir",
            str(tmp_path),
        ]
    )
    assert code == 0
    assert "xstest: 5 records -> 3 rows" in capsys.readouterr().out
    assert pq.read_table(tmp_path / "prompts.parquet").num_rows == 3


@pytest.mark.parametrize(
    ("source", "path", "message"),
    [
        ("wf_mt", "pku_train.jsonl", "wf_mt: .*pku_train.jsonl: missing column"),
        ("nope", "pku_train.jsonl", "unknown source 'nope'"),
        ("pku_train", "missing.jsonl", "pku_train: .*missing.jsonl: no such file"),
    ],
)
def test_read_errors_exit_2_with_message(tmp_path, capsys, source, path, message):
    import re

    code = main(
        ["sources", "read", "--source", source, "--path", str(FIXTURES / path), "--output_dir", str(tmp_path)]
    )
    assert code == 2
    assert re.search(message, capsys.readouterr().err)
    assert not (tmp_path / "pairs.parquet").exists()


def test_list_shows_adapters_with_licences(capsys):
    assert main(["sources", "list", "--json"]) == 0
    entries = {e["source"]: e for e in json.loads(capsys.readouterr().out)}
    assert entries["pku_train"]["license"] == "cc-by-nc-4.0"
    assert entries["hh_train"]["hub"] == "Anthropic/hh-rlhf data_dir=harmless-base split=train"
    assert entries["do_not_answer"]["kind"] == "prompts"
    assert len(entries) == 18
    assert entries["prompts"]["kind"] == "prompts"  # the generic adapter of a user's own prompts
    assert entries["preference"]["kind"] == "pairs"  # any preference file, under a name the user gives


def test_cli_help_states_the_library_clip_budget(capsys):
    from spl_hf.sources import DEFAULT_CLIP_CHARS

    with pytest.raises(SystemExit):
        main(["sources", "read", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "0 (None in Python): no clipping" in text and f"(default: {DEFAULT_CLIP_CHARS})" in text


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            b"version https://git-lfs.github.com/spec/v1\noid sha256:00\nsize 1\n",
            "Git LFS pointer, not the data",
        ),
        (b'{"chosen": "x"}\n', "named .gz but not gzip-compressed"),
    ],
)
def test_whole_file_errors_exit_2_with_one_line(tmp_path, capsys, content, message):
    path = tmp_path / "test.jsonl.gz"
    path.write_bytes(content)
    code = main(
        [
            "sources",
            "read",
            "--source",
            "hh_train",
            "--path",
            str(path),
            "--output_dir",
            str(tmp_path / "out"),
        ]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert message in err and "test.jsonl.gz" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_out_is_guarded_and_overwrite_replaces_an_earlier_read(tmp_path, capsys):
    out = tmp_path / "out"
    argv = [
        "sources",
        "read",
        "--source",
        "xstest",
        "--path",
        str(FIXTURES / "xstest.jsonl"),
        "--output_dir",
        str(out),
    ]
    assert main(argv) == 0
    assert main(argv) == 2  # an earlier output is only replaced on request
    assert "--overwrite" in capsys.readouterr().err
    assert main([*argv, "--overwrite"]) == 0
    # a folder holding someone else's file, or the input's own folder, is refused and left alone
    user = tmp_path / "mine"
    user.mkdir()
    (user / "notes.txt").write_text("keep me")
    assert main([*argv[:-1], str(user)]) == 2
    assert sorted(p.name for p in user.iterdir()) == ["notes.txt"]
    assert main([*argv[:-1], str(FIXTURES), "--overwrite"]) == 2
    assert not (FIXTURES / "prompts.parquet").exists()


def test_pku_and_harmbench_options(tmp_path, capsys):
    rows = [
        {
            "prompt": f"q{i}",
            "response_0": f"a{i}",
            "response_1": f"b{i}",
            "is_response_0_safe": i == 0,
            "is_response_1_safe": False,
            "safer_response_id": 0,
            "better_response_id": 0,
        }
        for i in range(2)
    ]
    pku = tmp_path / "pku.jsonl"
    pku.write_text("".join(json.dumps(r) + "\n" for r in rows))
    argv = ["sources", "read", "--source", "pku_train", "--path", str(pku), "--json"]
    assert main([*argv, "--pku_drop_both_unsafe", "--output_dir", str(tmp_path / "p")]) == 0
    assert json.loads(capsys.readouterr().out)["filtered"] == {"both_unsafe": 1}
    table = pq.read_table(tmp_path / "p" / "pairs.parquet")
    assert table.column("response_a_safe").to_pylist() == [True]

    hb = [
        "sources",
        "read",
        "--source",
        "harmbench",
        "--path",
        str(FIXTURES / "harmbench_behaviors_text_all.csv"),
    ]
    assert main([*hb, "--output_dir", str(tmp_path / "h1"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["rows_yielded"] == 2
    more = ["--harmbench_categories", "standard", "--harmbench_categories", "copyright"]
    assert main([*hb, *more, "--output_dir", str(tmp_path / "h2"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["filtered"] == {"functional_category_contextual": 1}


def test_a_truncated_download_exits_2_naming_it_unless_a_partial_file_is_accepted(tmp_path, capsys):
    # reliability review: a truncated .gz exited 0 keeping 2,010 of 4,000 rows
    import gzip

    lines = [
        json.dumps(
            {
                "prompt": f"q{i}",
                "response_0": "x",
                "response_1": "y",
                "safer_response_id": 1,
                "better_response_id": 0,
            }
        )
        for i in range(4000)
    ]
    data = gzip.compress(("\n".join(lines) + "\n").encode(), mtime=0)
    path = tmp_path / "pku.jsonl.gz"
    path.write_bytes(data[: len(data) // 2])
    args = ["sources", "read", "--source", "pku_train", "--path", str(path)]
    assert main([*args, "--output_dir", str(tmp_path / "a")]) == 2
    err = capsys.readouterr().err
    assert "pku.jsonl.gz: incomplete file" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "a" / "pairs.parquet").exists()
    assert main([*args, "--output_dir", str(tmp_path / "b"), "--accept_partial", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["partial"] is True and report["quarantined"] == {"truncated_file": 1}
    assert 0 < report["rows_yielded"] < 4000
