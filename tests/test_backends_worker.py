"""The runner and its results folder: shards fixed by the items, resumable, refusing what it did not write."""

import os
from functools import partial
from pathlib import Path
from typing import ClassVar

import pytest

from spl_hf.backends import (
    ExecutorArgs,
    ExecutorError,
    InputError,
    NoResult,
    ResultsFolderError,
    ShardStore,
    Stage,
    run_stage,
)
from spl_hf.backends.worker import plan_shards


class Squares:
    """A worker without a model: squares of integers, grouped by tens; 13 is bad input, 7 not judged."""

    kind = "squares"
    batch_groups = 2
    calls: ClassVar[list[list[int]]] = []

    def __init__(self) -> None:
        self.backend = None

    @staticmethod
    def item_id(item: int) -> str:
        return f"n{item}"

    @staticmethod
    def group(item: int) -> str:
        return str(item // 10)

    @staticmethod
    def describe(item: int) -> dict:
        return {"n": item}

    @staticmethod
    def order(item: int) -> int:
        return -item

    def compute_batch(self, items):
        Squares.calls.append(list(items))
        return [InputError("thirteen") if n == 13 else n * n for n in items]

    def output_row(self, item: int, result: int):
        return NoResult("seven") if item == 7 else {"n": item, "square": result}


def _make() -> Squares:
    return Squares()


STAGE = Stage(Squares, partial(_make), {"v": 1}, progress=False)


def test_shards_are_fixed_by_the_items_not_their_order_or_the_workers() -> None:
    items = list(range(60))
    a = plan_shards(STAGE, items, 2)
    b = plan_shards(STAGE, list(reversed(items)), 2)
    assert [s.name for s in a] == [s.name for s in b] and len(a) == 3
    assert all({n // 10 for n in s.items} and len({n // 10 for n in s.items}) <= 2 for s in a)
    other = Stage(Squares, partial(_make), {"v": 2}, progress=False)
    assert {s.name for s in plan_shards(other, items, 2)}.isdisjoint(s.name for s in a)


def test_run_resumes_from_finished_shards_and_writes_the_same_bytes(tmp_path: Path) -> None:
    items = list(range(40))
    store = ShardStore(str(tmp_path / "r"))
    full = run_stage(STAGE, items, store, ExecutorArgs(shard_groups=1))
    assert full.computed == 40 and full.stats["shards"] == 4
    assert [r["n"] for r in full.rows] == [n for n in items if n not in (7, 13)]
    assert full.failures == [{"n": 13, "reason": "thirteen"}]
    assert full.not_judged == [{"n": 7, "reason": "seven"}]
    files = sorted((tmp_path / "r" / "squares").iterdir())
    reference = {f.name: f.read_bytes() for f in files}
    # A "killed" run: two shards lost, and a half-written temporary file left behind.
    files[0].unlink()
    files[2].unlink()
    (tmp_path / "r" / "squares" / f".{files[0].name}.0123456789ab.partial").write_bytes(b"half")
    Squares.calls.clear()
    again = run_stage(STAGE, items, ShardStore(str(tmp_path / "r")), ExecutorArgs(shard_groups=1))
    assert (again.computed, again.cached, again.stats["shards_computed"]) == (20, 20, 2)
    assert sorted(n for call in Squares.calls for n in call) == sorted(
        n for f in (files[0], files[2]) for n in items if f.name.startswith(_shard_of(n))
    )
    assert {f.name: f.read_bytes() for f in sorted((tmp_path / "r" / "squares").glob("[!.]*"))} == reference
    assert again.rows == full.rows


def _shard_of(n: int) -> str:
    return next(s.name for s in plan_shards(STAGE, list(range(40)), 1) if n in s.items)


def test_groups_stay_together_in_one_engine_call(tmp_path: Path) -> None:
    Squares.calls.clear()
    run_stage(STAGE, list(range(30)), ShardStore(str(tmp_path / "r")), ExecutorArgs(shard_groups=4))
    for call in Squares.calls:  # batch_groups = 2: two whole tens per call, longest (largest) first
        assert len({n // 10 for n in call}) <= 2 and call == sorted(call, key=lambda n: -n)


def test_a_folder_with_files_spl_hf_did_not_write_is_refused_and_kept(tmp_path: Path) -> None:
    folder = tmp_path / "r"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    with pytest.raises(ResultsFolderError, match="not an spl_hf results folder"):
        ShardStore(str(folder))
    ShardStore(str(tmp_path / "ok"))
    (tmp_path / "ok" / "judge").mkdir()
    (tmp_path / "ok" / "judge" / "scores.csv").write_text("x")
    with pytest.raises(ResultsFolderError, match=r"did not write \(\['judge/scores.csv'\]\)"):
        ShardStore(str(tmp_path / "ok"))
    assert (folder / "notes.txt").read_text() == "mine" and (
        tmp_path / "ok" / "judge" / "scores.csv"
    ).exists()


def test_a_results_folder_that_cannot_be_written_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(ResultsFolderError, match="cannot be written"):
        ShardStore(str(tmp_path / "file" / "results"))
    with pytest.raises(ResultsFolderError, match="is a file"):
        ShardStore(str(tmp_path / "file"))
    if os.geteuid() != 0:  # root writes anywhere
        (tmp_path / "ro").mkdir(mode=0o500)
        with pytest.raises(ResultsFolderError, match="cannot be written"):
            ShardStore(str(tmp_path / "ro" / "results"))


def test_an_fsspec_folder_takes_the_same_shards() -> None:
    pytest.importorskip("fsspec")
    store = ShardStore("memory://spl-hf-test/results")
    result = run_stage(STAGE, list(range(25)), store, ExecutorArgs(shard_groups=2))
    again = run_stage(STAGE, list(range(25)), ShardStore("memory://spl-hf-test/results"), ExecutorArgs())
    assert result.computed == 25 and again.computed == 25  # another shard size is another plan
    assert again.rows == result.rows
    assert run_stage(STAGE, list(range(25)), store, ExecutorArgs(shard_groups=2)).computed == 0
    assert not store.foreign()


def test_executor_settings_are_checked() -> None:
    with pytest.raises(ExecutorError, match="--replicas"):
        ExecutorArgs(replicas=0)
    with pytest.raises(ExecutorError, match="--executor"):
        ExecutorArgs(executor="dask")
    with pytest.raises(ExecutorError, match="--gpus_per_replica"):
        ExecutorArgs(gpus_per_replica=-1)


def test_the_ray_executor_without_ray_says_which_extra(monkeypatch) -> None:
    import sys

    from spl_hf.backends import check_executor

    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ExecutorError, match=r"spl_hf\[ray\]"):
        check_executor(ExecutorArgs(executor="ray"))


def test_a_shard_records_the_engine_that_computed_it(tmp_path: Path) -> None:
    from spl_hf.backends.shards import ShardRecord

    store = ShardStore(str(tmp_path / "r"))
    records = [ShardRecord("a", "ok", {"x": 1.5}, None), ShardRecord("b", "failed", {"n": 2}, "why")]
    store.write("judge", "0" * 64, records, {"backend": "hf", "dtype": "float32"})
    assert store.read("judge", "0" * 64) == (records, {"backend": "hf", "dtype": "float32"})


def test_an_unreachable_ray_address_fails_at_once() -> None:
    pytest.importorskip("ray")
    from spl_hf.backends import check_executor

    with pytest.raises(ExecutorError, match=r"--ray_address 127.0.0.1:1: cannot connect to the Ray cluster"):
        check_executor(ExecutorArgs(executor="ray", ray_address="127.0.0.1:1"))
