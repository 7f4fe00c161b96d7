"""Resumable release stages: finished stages are skipped, changed inputs recompute, a killed stage leaves nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from spl_hf.release.stages import STAGE_FILE, StageRunner, fingerprint, stage_key


def _writer(calls: list[str], text: str):
    def fn(out: Path) -> dict:
        calls.append(text)
        (out / "result.txt").write_text(text)
        return {"chars": len(text)}

    return fn


def test_same_settings_skip_and_changed_settings_recompute(tmp_path):
    calls: list[str] = []
    runner = StageRunner(tmp_path, log=lambda _m: None)
    first = runner.run("read", {"pool": "a"}, _writer(calls, "hello"))
    again = runner.run("read", {"pool": "a"}, _writer(calls, "other"))
    changed = runner.run("read", {"pool": "b"}, _writer(calls, "world"))
    assert calls == ["hello", "world"]
    assert not first.skipped and again.skipped and not changed.skipped
    assert again.path == first.path and again.counts == {"chars": 5}
    assert (first.path / "result.txt").read_text() == "hello"
    assert changed.key != first.key and (changed.path / "result.txt").read_text() == "world"
    assert [o.name for o in runner.outcomes] == ["read", "read", "read"]


def test_a_stage_that_fails_midway_leaves_no_finished_stage(tmp_path):
    runner = StageRunner(tmp_path, log=lambda _m: None)

    def dies(out: Path) -> dict:
        (out / "half.txt").write_text("partial")
        raise KeyboardInterrupt  # what a kill looks like from inside

    with pytest.raises(KeyboardInterrupt):
        runner.run("judge", {"x": 1}, dies)
    _key, path, done = runner.plan("judge", {"x": 1})
    assert not done and not path.exists()
    calls: list[str] = []
    outcome = runner.run("judge", {"x": 1}, _writer(calls, "complete"))
    assert calls == ["complete"] and (outcome.path / STAGE_FILE).is_file()
    assert not (outcome.path / "half.txt").exists()
    assert sorted(p.name for p in (tmp_path / "stages").iterdir()) == [outcome.path.name]


def test_reuse_false_and_still_valid_rerun_a_finished_stage(tmp_path):
    calls: list[str] = []
    runner = StageRunner(tmp_path, log=lambda _m: None)
    runner.run("read", {"hub": "unpinned"}, _writer(calls, "v1"))
    runner.run("read", {"hub": "unpinned"}, _writer(calls, "v2"), reuse=False)
    runner.run("write", {"k": 1}, _writer(calls, "w1"))
    runner.run("write", {"k": 1}, _writer(calls, "w2"), still_valid=lambda _p: True)
    runner.run("write", {"k": 1}, _writer(calls, "w3"), still_valid=lambda _p: False)
    assert calls == ["v1", "v2", "w1", "w3"]


def test_keys_and_fingerprints_are_content_based(tmp_path):
    assert stage_key("a", {"x": 1, "y": [1, 2]}) == stage_key("a", {"y": [1, 2], "x": 1})
    assert stage_key("a", {"x": 1}) != stage_key("b", {"x": 1})
    d = tmp_path / "d"
    d.mkdir()
    (d / "f.txt").write_text("one")
    before = fingerprint(d)
    (d / "f.txt").write_text("two")
    assert fingerprint(d) != before
    with pytest.raises(FileNotFoundError, match="nosuch"):
        fingerprint(tmp_path / "nosuch")


def test_held_out_sets_are_read_whole_and_each_set_counted(tmp_path):
    # real-data review D1: a held-out HarmBench file was cut to its standard behaviours
    import pyarrow as pa

    from spl_hf.decontam import DecontamConfig
    from spl_hf.release.decontam_stage import decontaminate_rows, heldout_table
    from spl_hf.release.pools import SourceSpec
    from spl_hf.sources import read_prompt_pool

    csv = Path(__file__).parent / "fixtures" / "sources" / "harmbench_behaviors_text_all.csv"
    specs = [SourceSpec("harmbench", str(csv), None)]
    table, [report] = heldout_table(specs, ["harmbench"], DecontamConfig(heldout=["harmbench"]))
    assert table.num_rows == 4 and report["filtered"] == {} and report["role"] == "heldout"
    narrowed = DecontamConfig(heldout=["harmbench"], heldout_harmbench_categories=["standard"])
    assert heldout_table(specs, ["harmbench"], narrowed)[0].num_rows == 2
    # training rows: all four behaviours, as a training source reads them with every category
    train = read_prompt_pool("harmbench", csv, harmbench_categories=("standard", "contextual", "copyright"))
    other = read_prompt_pool("xstest", Path(__file__).parent / "fixtures" / "sources" / "xstest.jsonl")
    rows = pa.concat_tables([train.prompts.data.table, other.prompts.data.table])
    kept, summary = decontaminate_rows(rows, specs, DecontamConfig(heldout=["harmbench"]), tmp_path, print)
    assert summary["rows_removed"] == 4 and set(kept.column("source").to_pylist()) == {"xstest"}
    assert summary["heldout_prompts"] == {"harmbench": 4}
    [held] = summary["sources"]
    assert held["origin"] == csv.name and len(held["sha256"]) == 64


def test_decontamination_that_removes_everything_stops_naming_the_cause(tmp_path):
    from spl_hf.decontam import DecontamConfig
    from spl_hf.release.decontam_stage import decontaminate_rows
    from spl_hf.release.pools import SourceSpec
    from spl_hf.sources import read_prompt_pool

    xstest = Path(__file__).parent / "fixtures" / "sources" / "xstest.jsonl"
    rows = read_prompt_pool("xstest", xstest).prompts.data.table
    with pytest.raises(ValueError, match=r"decontamination removed all \d+ training rows .* xstest"):
        decontaminate_rows(
            rows,
            [SourceSpec("xstest", str(xstest), None)],
            DecontamConfig(heldout=["xstest"]),
            tmp_path,
            print,
        )
    assert not (tmp_path / "decontamination.json").exists()


def test_a_stage_fills_its_own_random_temp_and_removes_a_dead_attempts(tmp_path):
    import os
    import sys

    from tests import procs

    with procs.started([sys.executable, "-c", "pass"]) as proc:
        proc.wait()  # a pid no process holds any more: a killed earlier attempt
    runner = StageRunner(tmp_path, log=lambda _m: None)
    _key, path, _done = runner.plan("judge", {"x": 1})
    path.parent.mkdir(parents=True)
    dead = path.with_name(f".{path.name}.partial-{proc.pid}-0123456789ab")
    dead.mkdir()
    (dead / "half.txt").write_text("partial")
    seen: list[Path] = []

    def fn(out: Path) -> dict:
        seen.append(out)
        return {}

    runner.run("judge", {"x": 1}, fn)
    assert seen[0].name.startswith(f".{path.name}.partial-{os.getpid()}-") and seen[0] != dead
    assert not dead.exists() and sorted(p.name for p in path.parent.iterdir()) == [path.name]
