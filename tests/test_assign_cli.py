"""`spl-hf assign` end to end with parquet and jsonl files."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spl_hf.assign import read_table, write_table
from spl_hf.assign.synthetic import card_shaped_scores
from spl_hf.cli import main

N, CAPACITY = 1200, 14


@pytest.fixture(scope="module")
def scores_table() -> pa.Table:
    return card_shaped_scores(N, seed=21)


def run_json(args: list[str], capsys) -> tuple[int, dict]:
    code = main(args)
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("ext", ["parquet", "jsonl"])
def test_solve_and_verify_round_trip(tmp_path: Path, scores_table: pa.Table, ext: str, capsys) -> None:
    scores = tmp_path / f"scores.{ext}"
    write_table(scores_table, scores)
    out = tmp_path / f"assign.{ext}"
    args = [
        "assign",
        "--scores",
        str(scores),
        "--capacity",
        str(CAPACITY),
        "--output_dir",
        str(out),
        "--json",
    ]
    code, summary = run_json(args, capsys)
    assert code == 0 and summary["certificate_ok"] is True
    for key in (
        "objective",
        "assigned",
        "tenets_kept",
        "tenets_dropped",
        "seed",
        "scale",
        "strategy",
        "solver",
    ):
        assert key in summary
    assert summary["assigned"] == CAPACITY * len(summary["tenets_kept"]) > 0
    assert (summary["seed"], summary["solver"], summary["solves"]) == (42, "ortools", 1)
    written = read_table(out)
    assert written.column_names == ["pair_id", "prompt_id", "tenet", "score"]
    assert written.num_rows == summary["assigned"]
    assert sum(abs(s) for s in written.column("score").to_pylist()) == pytest.approx(summary["objective"])
    cert = out.with_name(out.name + ".certificate.json")
    first = (out.read_bytes(), cert.read_bytes())
    assert main(args) == 2  # an existing output is replaced only with --overwrite
    assert "--overwrite" in capsys.readouterr().err
    assert run_json([*args, "--overwrite"], capsys)[0] == 0
    assert (out.read_bytes(), cert.read_bytes()) == first  # byte-identical re-run

    code, check = run_json(
        ["assign", "verify", "--scores", str(scores), "--assignment", str(out), "--json"], capsys
    )
    assert code == 0 and check["certificate_ok"] and check["failures"] == []


def test_networkx_writes_the_same_assignment(tmp_path: Path, scores_table: pa.Table, capsys) -> None:
    small = scores_table.filter(pa.compute.less(scores_table["pair_id"], "pair-0000300"))
    scores = tmp_path / "scores.parquet"
    pq.write_table(small, scores)
    outs = {}
    for solver in ("ortools", "networkx"):
        out = tmp_path / f"{solver}.parquet"
        args = [
            "assign",
            "--scores",
            str(scores),
            "--capacity",
            "4",
            "--solver",
            solver,
            "--output_dir",
            str(out),
        ]
        args.append("--json")
        code, summary = run_json(args, capsys)
        assert code == 0 and summary["solver"] == solver
        outs[solver] = out.read_bytes()
    assert outs["ortools"] == outs["networkx"]


def test_verify_rejects_a_tampered_assignment(tmp_path: Path, scores_table: pa.Table, capsys) -> None:
    scores = tmp_path / "scores.parquet"
    pq.write_table(scores_table, scores)
    out = tmp_path / "assign.parquet"
    run_json(
        ["assign", "--scores", str(scores), "--capacity", str(CAPACITY), "--output_dir", str(out), "--json"],
        capsys,
    )
    rows = pq.read_table(out).to_pylist()
    rows[0], rows[-1] = {**rows[0], "tenet": rows[-1]["tenet"]}, {**rows[-1], "tenet": rows[0]["tenet"]}
    tampered = tmp_path / "tampered.parquet"
    pq.write_table(pa.Table.from_pylist(rows), tampered)
    cert = str(out) + ".certificate.json"
    args = ["assign", "verify", "--scores", str(scores), "--assignment", str(tampered), "--certificate", cert]
    code, check = run_json([*args, "--json"], capsys)
    assert code == 1 and not check["certificate_ok"] and check["failures"]


def test_bad_input_exits_2_naming_rows(tmp_path: Path, capsys) -> None:
    scores = tmp_path / "bad.jsonl"
    scores.write_text(
        '{"pair_id": "p1", "prompt_id": "q1", "tenet": "a", "score": 0.9}\n'
        '{"pair_id": "p1", "prompt_id": "q1", "tenet": "a", "score": 0.8}\n'
    )
    code = main(
        ["assign", "--scores", str(scores), "--capacity", "1", "--output_dir", str(tmp_path / "o.jsonl")]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert "bad.jsonl: 2 row(s) repeat a (pair_id, tenet)" in err and "row 1 (pair_id='p1'" in err
    assert not (tmp_path / "o.jsonl").exists()
    code = main(
        ["assign", "--scores", str(scores), "--capacity", "0", "--output_dir", str(tmp_path / "o.jsonl")]
    )
    assert code == 2 and "capacity must be a positive integer" in capsys.readouterr().err


def test_empty_assignment_round_trips_through_jsonl(tmp_path: Path, capsys) -> None:
    scores = tmp_path / "tiny.jsonl"
    scores.write_text(
        '{"pair_id": "p1", "prompt_id": "q1", "tenet": "a", "score": 0.9}\n'
        '{"pair_id": "p2", "prompt_id": "q2", "tenet": "b", "score": -0.6}\n'
    )
    out = tmp_path / "none.jsonl"
    code, summary = run_json(
        ["assign", "--scores", str(scores), "--capacity", "2", "--output_dir", str(out), "--json"], capsys
    )
    assert code == 0 and summary["assigned"] == 0 and summary["tenets_kept"] == []
    assert {d["reason"] for d in summary["tenets_dropped"]} == {"pool_below_capacity"}
    assert out.read_text() == ""
    code, check = run_json(
        ["assign", "verify", "--scores", str(scores), "--assignment", str(out), "--json"], capsys
    )
    assert code == 0 and check["certificate_ok"]
