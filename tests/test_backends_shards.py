"""The results folder on a cluster: journals of unfinished shards, resolved paths, probes, one-request writes."""

import os
import pickle
from functools import partial
from pathlib import Path

import pytest

from spl_hf.backends import ExecutorArgs, ResultsFolderError, ShardStore, Stage, run_stage
from spl_hf.backends.executor import Interrupted
from tests.test_backends_worker import Squares


class OneTenPerCall(Squares):
    """Squares, one group (ten) per engine call; ``stop_at`` calls in, Ctrl-C arrives."""

    batch_groups = 1
    stop_at: int | None = None

    def compute_batch(self, items):
        if OneTenPerCall.stop_at is not None and len(Squares.calls) == OneTenPerCall.stop_at:
            raise KeyboardInterrupt
        return super().compute_batch(items)


STAGE = Stage(OneTenPerCall, partial(OneTenPerCall), {"v": 1}, progress=False)


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_an_interrupted_shard_keeps_its_finished_calls_and_resumes_to_the_same_bytes(tmp_path: Path) -> None:
    items = list(range(60))  # 6 tens; shard_groups 4: a shard of 4 tens, then one of 2
    OneTenPerCall.stop_at, Squares.calls[:] = None, []
    run_stage(STAGE, items, ShardStore(str(tmp_path / "ref")), ExecutorArgs(shard_groups=4))
    reference = _files(tmp_path / "ref" / "squares")

    OneTenPerCall.stop_at, Squares.calls[:] = 2, []  # two tens of the first shard done, then Ctrl-C
    with pytest.raises(Interrupted) as stop:
        run_stage(STAGE, items, ShardStore(str(tmp_path / "r")), ExecutorArgs(shard_groups=4))
    assert (stop.value.kept, stop.value.total, stop.value.signum) == (20, 60, 2)
    assert str(stop.value) == "interrupted: 20 of 60 kept; rerun to resume"
    left = list((tmp_path / "r" / "squares").iterdir())
    assert [p.name.endswith(".journal") for p in left] == [True]  # no shard, no partial file

    OneTenPerCall.stop_at, Squares.calls[:] = None, []
    again = run_stage(STAGE, items, ShardStore(str(tmp_path / "r")), ExecutorArgs(shard_groups=4))
    assert (
        len(Squares.calls) == 4 and sum(len(c) for c in Squares.calls) == 40
    )  # the journaled two: not again
    assert _files(tmp_path / "r" / "squares") == reference  # and the journal is gone
    assert (again.computed, again.cached) == (40, 20) and len(again.rows) == 58


def test_a_torn_journal_line_is_recomputed(tmp_path: Path) -> None:
    from spl_hf.backends.shards import ShardRecord

    store = ShardStore(str(tmp_path / "r"))
    journal = store.journal("squares", "a" * 64)
    journal.append([ShardRecord("n1", "ok", {"x": 0.1 + 0.2}, None)])
    with journal.path.open("ab") as fh:
        fh.write(b'["n2", "ok"')  # killed inside a write
    assert journal.load() == {"n1": ShardRecord("n1", "ok", {"x": 0.1 + 0.2}, None)}
    assert not store.foreign()


def test_a_relative_folder_is_resolved_by_the_driver_and_a_replica_never_makes_its_own(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    store = ShardStore("rel/run/results")
    assert store.url == str(tmp_path / "rel" / "run" / "results")
    elsewhere = tmp_path / "other"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    replica = pickle.loads(pickle.dumps(store))  # what a Ray replica gets
    assert replica.root == store.root
    name = replica.write_probe("node-1")
    assert store.take_probe(name) == "node-1" and not store.foreign()
    # A node whose disk holds no such folder (no marker) is refused, and creates nothing.
    lost = pickle.dumps(ShardStore(str(tmp_path / "gone")))
    (tmp_path / "gone" / "SPL_HF_RESULTS").unlink()
    with pytest.raises(ResultsFolderError, match="does not see the driver's results folder"):
        pickle.loads(lost)
    assert not (elsewhere / "rel").exists()


def test_a_dry_run_checks_the_folder_could_be_written_and_leaves_nothing(tmp_path: Path) -> None:
    ShardStore(str(tmp_path / "new" / "results"), create=False)
    assert not (tmp_path / "new").exists()
    (tmp_path / "old").mkdir()
    ShardStore(str(tmp_path / "old"), create=False)
    assert list((tmp_path / "old").iterdir()) == []
    (tmp_path / "file").write_text("x")
    with pytest.raises(ResultsFolderError, match="cannot be written"):
        ShardStore(str(tmp_path / "file" / "results"), create=False)
    if os.geteuid() != 0:  # root writes anywhere
        (tmp_path / "ro").mkdir(mode=0o500)
        with pytest.raises(ResultsFolderError, match="cannot be written"):
            ShardStore(str(tmp_path / "ro" / "results"), create=False)


def test_an_object_store_write_is_one_put_and_leaves_no_temporary(monkeypatch) -> None:
    from spl_hf.backends.shards import ShardRecord

    store = ShardStore("memory://spl-hf-shards-test/results")
    store.atomic_put = True  # what s3://, gs:// and az:// get: one PUT is atomic there
    calls: list[str] = []
    for method in ("pipe_file", "mv", "makedirs", "info", "rm_file"):
        real = getattr(store.fs, method)
        monkeypatch.setattr(
            store.fs, method, lambda *a, _m=method, _r=real, **k: calls.append(_m) or _r(*a, **k)
        )
    store.write("judge", "b" * 64, [ShardRecord("a", "ok", {"x": 1}, None)], {})
    assert calls == ["pipe_file"]
    assert store.finished("judge") == {"b" * 64} and not store.foreign()


def test_a_dry_run_refuses_an_unreachable_ray_address_and_an_unwritable_results_folder(
    tmp_path: Path, capsys
) -> None:
    from spl_hf.cli import main
    from tests.conftest import REPO

    base = ["release", "tenets", "--config", str(REPO / "recipes" / "tenets" / "demo.yaml"), "--dry_run"]
    base += ["--run_dir", str(tmp_path / "run"), "--output_dir", str(tmp_path / "ds")]
    assert main([*base, "--executor", "ray", "--ray_address", "127.0.0.1:1"]) == 2
    err = capsys.readouterr().err
    assert "--ray_address 127.0.0.1:1: cannot connect" in err or "needs the ray extra" in err
    (tmp_path / "file").write_text("x")
    assert main([*base, "--results_dir", str(tmp_path / "file" / "results")]) == 2
    assert "the results folder cannot be written" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]  # a dry run leaves nothing


def test_a_journal_line_holds_the_row_the_shard_stores(tmp_path: Path) -> None:
    """One encoding of a row serves the journal and the shard: any text, NaN and nulls read back the same."""
    import json

    from spl_hf.backends.shards import ShardRecord

    records = [
        ShardRecord("n1", "ok", {"b": 0.1 + 0.2, "a": 'é "quoted"\n', "n": None, "f": float("nan")}, None),
        ShardRecord("n2", "failed", {"n": 2}, "too long: ü"),
        ShardRecord("n3", "not_judged", None, "mass 0.1"),
    ]
    journal = ShardStore(str(tmp_path / "r")).journal("squares", "b" * 64)
    journal.append(records)
    back = journal.load()
    assert [json.dumps(back[r.item].row, sort_keys=True) for r in records] == [
        json.dumps(r.row, sort_keys=True) for r in records
    ]
    assert [back[r.item].row_json for r in records] == [r.row_json for r in records]
    assert [(back[r.item].status, back[r.item].reason) for r in records] == [
        (r.status, r.reason) for r in records
    ]


class BrokenAtThirteen(Squares):
    """A bug in the engine at item 13 (not bad input: a RuntimeError)."""

    def compute_batch(self, items):
        if 13 in items:
            raise RuntimeError("engine bug at 13")
        return super().compute_batch(items)


def test_local_replica_processes_write_the_same_bytes_and_end_with_the_stage(tmp_path: Path) -> None:
    import multiprocessing

    from tests.test_backends_worker import STAGE as SQUARES

    items = list(range(60))
    one = run_stage(SQUARES, items, ShardStore(str(tmp_path / "one")), ExecutorArgs(shard_groups=1))
    two = run_stage(
        SQUARES, items, ShardStore(str(tmp_path / "two")), ExecutorArgs(shard_groups=1, replicas=2)
    )
    assert _files(tmp_path / "two") == _files(tmp_path / "one") and len(_files(tmp_path / "one")) == 7
    assert (two.rows, two.failures, two.not_judged) == (one.rows, one.failures, one.not_judged)
    assert two.stats["replicas"] == 2 and two.stats["engine_seconds"] >= 0
    assert not multiprocessing.active_children()

    # A replica's bug ends the stage with its traceback, and no replica outlives it.
    broken = Stage(BrokenAtThirteen, partial(BrokenAtThirteen), {"v": 1}, progress=False)
    with pytest.raises(RuntimeError, match="engine bug at 13"):
        run_stage(broken, items, ShardStore(str(tmp_path / "bug")), ExecutorArgs(shard_groups=1, replicas=2))
    assert not multiprocessing.active_children()


def test_a_shard_sent_to_another_process_holds_its_items_and_their_ids() -> None:
    """A judge shard travels as its pairs (not one object per tenet); other items go built, with ids."""
    from spl_hf.backends.judge import JudgeItems, PairInput, PairwiseJudge
    from spl_hf.backends.worker import TakenItems, plan_shards
    from spl_hf.tenets import default_tenets
    from tests.test_backends_worker import STAGE as SQUARES

    pairs = [
        PairInput(f"p{i}", f"q{i}", "s", i, ({"role": "user", "content": f"hi {i}"},), "a", f"b{i}")
        for i in range(5)
    ]
    items = JudgeItems(pairs, default_tenets().tenets[:3])
    stage = Stage(PairwiseJudge, partial(PairwiseJudge), {"v": 1}, progress=False)
    for shard in plan_shards(stage, items, 2):
        blob = pickle.dumps(shard.items)
        sent = pickle.loads(blob)
        assert list(sent) == list(shard.items) and len({it.pair.pair_id for it in sent}) <= 2
        assert sent.ids == shard.items.ids == [PairwiseJudge.item_id(it) for it in shard.items]
        assert b"hi 4" not in blob or any(it.pair.pair_id == "p4" for it in shard.items)  # its pairs alone

    shard = plan_shards(SQUARES, list(range(30)), 2)[0]
    sent = pickle.loads(pickle.dumps(shard.items))
    assert isinstance(sent, TakenItems) and list(sent) == list(shard.items)
    assert sent.ids is None  # Squares hashes its ids itself, as it does in this process


class SlowSquares(Squares):
    """Squares at 0.15 s per engine call: 40 shards take 3 s on two replicas, interrupted at 1.5 s."""

    def compute_batch(self, items):
        import time

        time.sleep(0.15)
        return super().compute_batch(items)


def test_an_interrupt_ends_the_local_replicas_and_keeps_their_finished_shards(tmp_path: Path) -> None:
    import multiprocessing
    import signal

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    slow = Stage(SlowSquares, partial(SlowSquares), {"v": 1}, progress=False)
    items, store = list(range(400)), ShardStore(str(tmp_path / "r"))
    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 1.5)  # Ctrl-C in the driver, the replicas mid-stage
    try:
        with pytest.raises(Interrupted) as stop:
            run_stage(slow, items, store, ExecutorArgs(shard_groups=1, replicas=2))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert not multiprocessing.active_children()
    landed = store.finished("squares")
    assert stop.value.total == 400 and 0 <= stop.value.kept <= 10 * len(landed) < 400
    again = run_stage(slow, items, store, ExecutorArgs(shard_groups=1, replicas=2))
    assert again.cached >= stop.value.kept and again.computed + again.cached == 400
    reference = run_stage(STAGE, items, ShardStore(str(tmp_path / "ref")), ExecutorArgs(shard_groups=1))
    assert again.rows == reference.rows
