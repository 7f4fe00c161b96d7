import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spl_hf.cli import main
from spl_hf.contract import composition_tables
from spl_hf.report.judge_comparison import compare_build, read_derivations, read_judge_labels
from spl_hf.rules import default_rulebase

RANKING = dict(default_rulebase().verdicts)


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def judge_rows(table: pa.Table, copy_all: bool = False):
    """Judge verdicts made up from the build: copy SPL's verdicts, swap sides on 3 labeled pairs, give equal
    verdicts on 2, label 4 unlabeled pairs, and leave 5 unlabeled pairs out of the file."""
    rows, unlabeled = [], 0
    labeled = 0
    for pid, d in zip(table.column("pair_id").to_pylist(), table.column("derivation").to_pylist()):
        if d["label"] is not None:
            va, vb = d["verdict_a"], d["verdict_b"]
            if not copy_all:
                if labeled < 3:
                    va, vb = vb, va
                elif labeled < 5:
                    vb = va
            labeled += 1
        else:
            unlabeled += 1
            if unlabeled <= 5:
                continue
            va, vb = (
                ("helpful_compliance", "unjustified_refusal")
                if unlabeled <= 9
                else ("justified_refusal",) * 2
            )
        rows.append({"pair_id": pid, "verdict_a": va, "verdict_b": vb})
    return rows


def test_common_support_and_composition(built_spl, tmp_path):
    table = read_derivations(built_spl)
    labeled = sum(d["label"] is not None for d in table.column("derivation").to_pylist())
    verdicts = write_jsonl(tmp_path / "judge.jsonl", judge_rows(table))
    r = compare_build(built_spl, verdicts)
    assert r.total_pairs == table.num_rows == 144
    assert r.labeled_prompt_shared == labeled
    assert r.common_support == labeled - 2  # two pairs with equal judge verdicts drop out
    assert r.same_choice == labeled - 2 - 3  # three swapped pairs: the judge prefers the other response
    assert (r.prompt_shared_only, r.judge_only, r.without_judge_verdict) == (2, 4, 5)
    assert r.neither == table.num_rows - labeled - 4
    assert r.labeled_judge == labeled - 2 + 4
    # Swapping verdicts keeps the (preferred, rejected) verdict pair, so both columns agree here.
    assert all(row.prompt_shared == row.judge for row in r.composition)
    assert sum(row.prompt_shared for row in r.composition) == r.common_support
    assert sum(s.common_pairs for s in r.sources) == r.common_support


def test_prompt_shared_column_matches_the_build_tables(built_spl, tmp_path):
    table = read_derivations(built_spl)
    r = compare_build(built_spl, write_jsonl(tmp_path / "j.jsonl", judge_rows(table, copy_all=True)))
    expected = {
        (v.preferred_verdict, v.rejected_verdict): v.pairs for v in composition_tables(table).verdict_pairs
    }
    assert {(c.preferred_verdict, c.rejected_verdict): c.prompt_shared for c in r.composition} == expected
    assert r.common_support == r.same_choice == r.labeled_prompt_shared


def test_judge_verdicts_change_the_composition(built_spl, tmp_path):
    table = read_derivations(built_spl)
    rows = judge_rows(table, copy_all=True)
    # The judge calls every refusal justified: helpful > unjustified becomes helpful > justified.
    for row in rows:
        for k in ("verdict_a", "verdict_b"):
            if row[k] == "unjustified_refusal":
                row[k] = "justified_refusal"
    r = compare_build(built_spl, write_jsonl(tmp_path / "j.jsonl", rows))
    by = {(c.preferred_verdict, c.rejected_verdict): c for c in r.composition}
    hu = by[("helpful_compliance", "unjustified_refusal")]
    assert hu.judge == 0 and hu.prompt_shared > 0
    assert by[("helpful_compliance", "justified_refusal")].judge == hu.prompt_shared
    # rows in rank order of the preferred verdict, then of the rejected verdict
    keys = [(RANKING[c.preferred_verdict], RANKING[c.rejected_verdict]) for c in r.composition]
    assert keys == sorted(keys, reverse=True)


def test_per_response_verdict_rows_equal_pair_rows(built_spl, tmp_path):
    table = read_derivations(built_spl)
    rows = judge_rows(table)
    per_response = [
        {"response_id": f"{r['pair_id']}/{s}", "prompt_id": "x", "verdict": r[f"verdict_{s}"]}
        for r in rows
        for s in "ab"
    ]
    a = compare_build(built_spl, write_jsonl(tmp_path / "pairs.jsonl", rows)).to_dict()
    b = compare_build(built_spl, write_jsonl(tmp_path / "resp.jsonl", per_response)).to_dict()
    assert {k: v for k, v in a.items() if k != "verdicts"} == {k: v for k, v in b.items() if k != "verdicts"}


def test_cli_writes_training_files_under_each_labeling(built_spl, tmp_path, capsys):
    table = read_derivations(built_spl)
    verdicts = write_jsonl(tmp_path / "judge.jsonl", judge_rows(table))
    out = tmp_path / "cmp"
    assert (
        main(
            [
                "report",
                "judge",
                str(built_spl),
                "--verdicts",
                str(verdicts),
                "--output_dir",
                str(out),
                "--json",
            ]
        )
        == 0
    )
    data = json.loads(capsys.readouterr().out)
    shared = pq.read_table(out / "common_support_prompt_shared.parquet").to_pylist()
    judge = pq.read_table(out / "common_support_judge.parquet").to_pylist()
    assert len(shared) == len(judge) == data["common_support"]
    differ = [(s, j) for s, j in zip(shared, judge) if s["chosen"] != j["chosen"]]
    assert len(differ) == 3  # the swapped pairs
    for s, j in differ:
        assert s["chosen"] == j["rejected"] and s["rejected"] == j["chosen"]
        assert s["chosen_verdict"] == j["chosen_verdict"]
    assert shared[0]["chosen"][0]["role"] == "assistant" and shared[0]["prompt"][0]["role"] == "user"
    assert json.loads((out / "comparison.json").read_text())["common_support"] == data["common_support"]
    assert main(["report", "judge", str(built_spl), "--verdicts", str(verdicts)]) == 0
    assert "Table X" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (
            [{"pair_id": "nope", "verdict_a": "helpful_compliance", "verdict_b": "harmful_compliance"}],
            "1 pair\\(s\\) not in the build",
        ),
        (
            [{"pair_id": "p", "verdict_a": "fine", "verdict_b": "harmful_compliance"}],
            "verdict_a 'fine' is not a verdict",
        ),
        (
            [
                {
                    "pair_id": "p",
                    "verdict_a": "helpful_compliance",
                    "verdict_b": "harmful_compliance",
                    "chosen": "b",
                }
            ],
            "has chosen='b' but its verdicts",
        ),
        (
            [{"pair_id": "p", "verdict_a": "helpful_compliance", "verdict_b": None}],
            "lacks a response verdict",
        ),
        ([{"response_id": "p/a", "verdict": "helpful_compliance"}], "verdict for one response only: p"),
        ([{"response_id": "p-0", "verdict": "helpful_compliance"}], "'<pair_id>/a'"),
    ],
)
def test_bad_verdict_files(built_spl, tmp_path, capsys, rows, message):
    import re

    path = write_jsonl(tmp_path / "v.jsonl", rows)
    assert main(["report", "judge", str(built_spl), "--verdicts", str(path)]) == 2
    err = capsys.readouterr().err
    assert re.search(message, err) and str(path) in err


def test_not_a_build(tmp_path):
    with pytest.raises(FileNotFoundError, match="derivations: no parquet files"):
        read_derivations(tmp_path)


def test_read_judge_labels_equal_ranks_give_no_label(tmp_path):
    path = write_jsonl(
        tmp_path / "v.jsonl",
        [
            {
                "pair_id": "p",
                "verdict_a": "justified_refusal",
                "verdict_b": "justified_refusal",
                "chosen": None,
            }
        ],
    )
    assert read_judge_labels(path, RANKING)["p"].chosen is None


def test_without_a_verdict_file_the_build_s_own_judge_labels_are_compared(built_spl_judge, built_spl, capsys):
    result = compare_build(built_spl_judge)
    tables = json.loads((built_spl_judge / "build_report.json").read_text())["judge"]["tables"]
    assert result.verdicts == "judge_derivations"
    assert (result.common_support, result.same_choice, result.labeled_judge) == (
        tables["common_support"],
        tables["same_choice"],
        tables["labeled_judge"],
    )
    # The composition the report counts is the one the card printed at build time.
    assert [
        (r.preferred_verdict, r.rejected_verdict, r.prompt_shared, r.judge) for r in result.composition
    ] == [
        (r["preferred_verdict"], r["rejected_verdict"], r["prompt_shared"], r["judge"])
        for r in tables["verdicts"]
    ]
    assert main(["report", "judge", str(built_spl)]) == 2
    assert "has no verdict-judge labels of its own" in capsys.readouterr().err
