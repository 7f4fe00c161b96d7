"""Any preference file: TRL's four preference layouts and mapped columns, under the user's source name."""

from __future__ import annotations

import csv
import gzip
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spl_hf.cli import main
from spl_hf.errors import SplHfError
from spl_hf.sources import prompt_id, read_pool, read_prompt_pool


def user(text):
    return {"role": "user", "content": text}


def bot(text):
    return {"role": "assistant", "content": text}


# TRL docs/source/dataset_formats.md, the preference type in its four layouts
TRL_RECORDS = [
    {"prompt": "The sky is", "chosen": " blue.", "rejected": " green."},  # standard, explicit
    {"chosen": "The grass is green.", "rejected": "The grass is purple."},  # standard, implicit
    {  # conversational, explicit
        "prompt": [user("What color is the sea?")],
        "chosen": [bot("It is blue.")],
        "rejected": [bot("It is green.")],
    },
    {  # conversational, implicit, with a system message and an earlier exchange
        "chosen": [
            {"role": "system", "content": "Be brief."},
            user("Hi"),
            bot("Hello!"),
            user("Where is the sun?"),
            bot("In the sky."),
        ],
        "rejected": [
            {"role": "system", "content": "Be brief."},
            user("Hi"),
            bot("Hello!"),
            user("Where is the sun?"),
            bot("In the sea."),
        ],
    },
]


def write_jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_a_trl_file_is_read_with_nothing_quarantined_under_its_source_name(tmp_path) -> None:
    path = write_jsonl(tmp_path / "trl.jsonl", TRL_RECORDS)
    pairs, quarantine, report = read_pool("preference", path, name="hh_test")
    assert quarantine == [] and pairs.num_rows == 4
    assert set(pairs["source"]) == {"hh_test"} and pairs["pair_id"][0] == "hh_test_0"
    rows = pairs.to_list()
    assert rows[0]["prompt"] == [user("The sky is")] and (rows[0]["response_a"], rows[0]["response_b"]) == (
        " blue.",
        " green.",
    )
    # trl.extract_prompt's rule: the space before the parting point goes with the completions
    assert rows[1]["prompt"] == [user("The grass is")] and rows[1]["response_a"] == " green."
    assert rows[2]["prompt"] == [user("What color is the sea?")] and rows[2]["response_b"] == "It is green."
    assert rows[3]["prompt"] == [
        {"role": "system", "content": "Be brief."},
        user("User: Hi\nAssistant: Hello!\nUser: Where is the sun?"),
    ]
    assert rows[3]["prompt_id"] == prompt_id(
        [("system", "Be brief."), ("user", "Hi"), ("assistant", "Hello!"), ("user", "Where is the sun?")]
    )
    assert set(pairs["source_preference"]) == {"a"}
    assert report.source == "hh_test" and report.to_dict()["adapter"] == "preference"


def test_trl_output_of_the_library_itself_reads_back(tmp_path) -> None:
    from trl import extract_prompt

    path = write_jsonl(tmp_path / "trl.jsonl", [extract_prompt(r) for r in TRL_RECORDS if "prompt" not in r])
    pairs, quarantine, _ = read_pool("preference", path, name="trl_explicit")
    implicit, _, _ = read_pool("preference", write_jsonl(tmp_path / "i.jsonl", TRL_RECORDS[1:2]), name="x")
    assert quarantine == [] and pairs["prompt"][0] == implicit["prompt"][0]


def test_a_mapped_csv_and_parquet(tmp_path) -> None:
    rows = [
        {"question": "How do I boil an egg?", "response_j": "Simmer it 9 minutes.", "response_k": "Fry it."},
        {"question": "What is 2+2?", "response_j": "4", "response_k": "5"},
    ]
    path = tmp_path / "se.csv.gz"
    with gzip.open(path, "wt", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    columns = (("chosen", "response_j"), ("prompt", "question"), ("rejected", "response_k"))
    pairs, quarantine, report = read_pool("preference", path, name="stack_exchange", columns=columns)
    assert quarantine == [] and pairs["response_a"] == ["Simmer it 9 minutes.", "4"]
    assert report.to_dict()["columns"] == {
        "chosen": "response_j",
        "prompt": "question",
        "rejected": "response_k",
    }
    parquet = tmp_path / "se.parquet"
    pq.write_table(pa.Table.from_pylist(rows), parquet)
    again, _, _ = read_pool("preference", parquet, name="stack_exchange", columns=columns)
    assert again["pair_id"] == pairs["pair_id"] and again["prompt_id"] == pairs["prompt_id"]


def test_a_pool_without_its_own_preference(tmp_path) -> None:
    path = write_jsonl(tmp_path / "u.jsonl", [{"q": "Why?", "x": "Because.", "y": "No idea."}])
    columns = (("prompt", "q"), ("response_a", "x"), ("response_b", "y"))
    pairs, quarantine, _ = read_pool("preference", path, name="unlabelled", columns=columns)
    assert quarantine == [] and pairs["source_preference"] == [None]


def test_a_bad_mapping_names_the_file_and_the_missing_column(tmp_path) -> None:
    path = write_jsonl(tmp_path / "se.jsonl", [{"question": "q", "response_j": "a", "response_k": "b"}])
    with pytest.raises(SplHfError, match=r"se.jsonl: no column 'answer_j' \(for chosen\)"):
        read_pool("preference", path, columns=(("chosen", "answer_j"), ("rejected", "response_k")))
    with pytest.raises(SplHfError, match="missing column"):
        read_pool("preference", path)  # no mapping: neither chosen/rejected nor response_a/response_b
    with pytest.raises(SplHfError, match="maps 'answer', which this adapter does not read"):
        read_pool("preference", path, columns=(("answer", "response_j"),))


@pytest.mark.parametrize("name", ["HH test", "hh_train", "1x", ""])
def test_source_names_are_checked(tmp_path, name) -> None:
    path = write_jsonl(tmp_path / "t.jsonl", TRL_RECORDS[:1])
    if name == "":
        assert read_pool("preference", path, name=name).pairs["source"] == ["preference"]
        return
    with pytest.raises(SplHfError, match="source_name"):
        read_pool("preference", path, name=name)


def test_malformed_preference_records_are_quarantined_with_reasons(tmp_path) -> None:
    bad = [
        {"prompt": "Q", "chosen": [bot("a"), bot("b")], "rejected": [bot("c")]},
        {"chosen": "Same start", "rejected": "Totally different"},
        {"chosen": [user("Q"), bot("a")], "rejected": "text"},
        {"prompt": [{"role": "tool", "content": "x"}], "chosen": "a", "rejected": "b"},
        {"prompt": "Q", "chosen": "a", "rejected": "a"},
        {"prompt": None, "chosen": "a", "rejected": "b"},
    ]
    path = write_jsonl(tmp_path / "bad.jsonl", [*bad, TRL_RECORDS[0]])
    pairs, quarantine, _ = read_pool("preference", path, name="bad")
    assert pairs.num_rows == 1
    assert [q.reason for q in quarantine] == [
        "bad_role_sequence",
        "empty_prompt",
        "wrong_type",
        "bad_role_sequence",
        "identical_responses",
        "empty_prompt",
    ]


def test_a_renamed_builtin_adapter_and_a_mapped_prompt_set(tmp_path) -> None:
    hh = write_jsonl(
        tmp_path / "hh.jsonl",
        [
            {
                "chosen": "\n\nHuman: Hi?\n\nAssistant: Hello.",
                "rejected": "\n\nHuman: Hi?\n\nAssistant: Go away.",
            }
        ],
    )
    pairs, _, report = read_pool("hh_train", hh, name="hh_test")
    assert pairs["pair_id"] == ["hh_test_0"]
    described = report.to_dict()["description"]
    assert (
        described.startswith("read by the hh_train adapter (Anthropic/hh-rlhf layout)")
        and " train" not in described
    )
    prompts = write_jsonl(tmp_path / "p.jsonl", [{"text": "How do magnets work?", "kind": "x", "y": "safe"}])
    columns = (("label", "y"), ("prompt", "text"), ("type", "kind"))
    rows, quarantine, _ = read_prompt_pool("xstest", prompts, columns=columns, name="my_xstest")
    assert rows["prompt"] == ["How do magnets work?"] and rows["source"] == ["my_xstest"] and not quarantine


def test_sources_read_preference_writes_rows_under_the_name(tmp_path, capsys) -> None:
    path = write_jsonl(tmp_path / "trl.jsonl", TRL_RECORDS)
    out = tmp_path / "out"
    argv = ["sources", "read", "--source", "preference", "--source_name", "hh_test", "--path", str(path)]
    assert main([*argv, "--output_dir", str(out), "--license", "mit"]) == 0
    report = json.loads((out / "report.json").read_text())
    assert (report["source"], report["rows_yielded"], report["n_quarantined"], report["license"]) == (
        "hh_test",
        4,
        0,
        "mit",
    )
    assert pq.read_table(out / "pairs.parquet").column("source").to_pylist() == ["hh_test"] * 4
    bad = tmp_path / "bad"
    assert main([*argv, "--output_dir", str(bad), "--columns", "chosen=nope"]) == 2
    assert f"{path}: no column 'nope' (for chosen)" in capsys.readouterr().err and not bad.exists()


def test_sources_read_refuses_a_file_its_adapter_cannot_read(tmp_path, capsys) -> None:
    # review (issue 25): a TRL file read by the HH-RLHF adapter lost every row to quarantine, exit 0
    path = write_jsonl(tmp_path / "trl.jsonl", TRL_RECORDS)
    out = tmp_path / "out"
    assert (
        main(["sources", "read", "--source", "hh_train", "--path", str(path), "--output_dir", str(out)]) == 2
    )
    err = capsys.readouterr().err
    assert f"hh_train: {path}: none of its 4 record(s) becomes a row" in err and not out.exists()
