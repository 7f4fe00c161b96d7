"""The judge stage streamed into columns: the same scores.parquet bytes, failures and not-judged as the rows."""

from __future__ import annotations

import io
from functools import partial
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spl_hf import files
from spl_hf.backends import ExecutorArgs, ResultsFolderError, ShardStore, Stage, judge_items, judge_outcome
from spl_hf.backends import score_columns as sc
from spl_hf.backends.judge import SCORE_COLUMNS, PairwiseJudge, parse_pairs
from spl_hf.backends.rehearsal import RehearsalBackend, RehearsalJudge, synthetic_judgements
from spl_hf.backends.runner import run_stage, start_stage
from spl_hf.backends.settings import JudgeConfig
from spl_hf.contract.scores import REHEARSAL_MODEL_ID
from spl_hf.files import PARQUET_SETTINGS
from spl_hf.tenets import default_tenets
from tests.backends_rows import pair_row

TENETS = [default_tenets()[n] for n in default_tenets().names()[:7]]


def _make(max_length: int, floor: float) -> RehearsalJudge:
    return RehearsalJudge(
        RehearsalBackend(seed=3, max_length=max_length, min_label_mass=floor), JudgeConfig()
    )


def _stage(max_length: int = 400, floor: float = 0.93) -> Stage:
    settings = {"engine": "rehearsal", "max_length": max_length, "floor": floor}
    return Stage(RehearsalJudge, partial(_make, max_length, floor), settings, progress=False)


def _pairs(**over):
    rows = [pair_row(i, **({"row_id": None} if i % 2 else {})) for i in range(9)]
    rows[4]["response_a"] = "a long answer " * 200  # over max_length: refused per tenet, no score
    return parse_pairs(rows)[0]


def _bytes(table: pa.Table, **kw) -> bytes:
    """What the old path wrote: the whole table through the one Parquet writer's settings."""
    buf = io.BytesIO()
    pq.write_table(table, buf, **PARQUET_SETTINGS, **kw)
    return buf.getvalue()


def _written(columns: sc.ScoreColumns, tmp_path) -> bytes:
    columns.write(tmp_path / "scores.parquet")
    return (tmp_path / "scores.parquet").read_bytes()


def test_streamed_scores_are_the_rows_byte_for_byte(tmp_path) -> None:
    items = judge_items(_pairs(), TENETS)
    store = ShardStore(str(tmp_path / "r"))
    result = run_stage(_stage(), items, store, ExecutorArgs(shard_groups=2))
    rows, refused, not_judged = judge_outcome(result, TENETS)
    assert rows and refused and not_judged.total  # all three outcomes are exercised
    assert set(rows[0]) == set(SCORE_COLUMNS) and rows[0]["model_id"] == REHEARSAL_MODEL_ID
    run = start_stage(_stage(), items, store, ExecutorArgs(shard_groups=2))
    assert run.stats["computed"] == 0  # everything read back from the shards
    columns = sc.read_scores(run, items, threads=3)
    got_refused, got_not_judged = columns.outcome()
    assert (got_refused, got_not_judged) == (refused, not_judged)
    assert columns.scores == len(rows)
    assert columns.mean_abs_score() == sum(abs(r["score"]) for r in rows) / len(rows)
    assert _written(columns, tmp_path) == _bytes(pa.Table.from_pylist(rows))


def test_row_groups_are_write_tables(tmp_path, monkeypatch) -> None:
    items = judge_items(_pairs(), TENETS)
    store = ShardStore(str(tmp_path / "r"))
    rows = run_stage(_stage(), items, store, ExecutorArgs(shard_groups=3)).rows
    # the real one is spl_hf.files.ROW_GROUP_ROWS (128Ki rows), for every file written
    monkeypatch.setattr(sc, "ROW_GROUP_ROWS", 5)
    monkeypatch.setattr(files, "ROW_GROUP_ROWS", 5)
    columns = sc.read_scores(start_stage(_stage(), items, store, ExecutorArgs(shard_groups=3)), items)
    assert _written(columns, tmp_path) == _bytes(pa.Table.from_pylist(rows), row_group_size=5)


def test_a_shard_holding_other_records_is_refused(tmp_path) -> None:
    items = judge_items(_pairs(), TENETS)
    store = ShardStore(str(tmp_path / "r"))
    run = start_stage(_stage(), items, store, ExecutorArgs(shard_groups=2))
    a, b = (Path(store.path("judge", n)) for n in run.plan.names[:2])
    a.write_bytes(b.read_bytes())
    with pytest.raises(ResultsFolderError, match="not the items its name hashes"):
        sc.read_scores(start_stage(_stage(), items, store, ExecutorArgs(shard_groups=2)), items)


def test_item_ids_are_the_judges_hashed_once_per_pair() -> None:
    items = judge_items(_pairs(), TENETS)
    assert items.item_ids(range(len(items))) == [PairwiseJudge.item_id(it) for it in items]
    for key, members in items.group_members():
        assert {PairwiseJudge.group(items[i]) for i in members} == {key}


def test_rehearsal_scores_are_card_shaped_and_fixed() -> None:
    names = list(default_tenets().names())
    scores = [j.score for p in range(400) for j in synthetic_judgements(f"p{p}", names, 0)]
    strong = sum(abs(s) >= 0.5 for s in scores) / len(scores)
    assert 0.10 < strong < 0.16  # about 13% eligible, as on the card
    assert [j.score for j in synthetic_judgements("p1", names, 0)] == [
        j.score for j in synthetic_judgements("p1", names, 0)
    ]
    assert synthetic_judgements("p1", names, 0) != synthetic_judgements("p1", names, 1)
