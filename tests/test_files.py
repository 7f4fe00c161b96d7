"""The one writer of files: whole files, random temporaries, never through a symlink."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

from spl_hf.errors import OutputError, SplHfError
from spl_hf.files import atomic_path, write_json, write_jsonl, write_text


def _write_many(path: str, tag: str, n: int) -> None:
    for i in range(n):
        write_jsonl(path, [{"tag": tag, "i": i, "pad": "x" * 4096} for _ in range(50)])


def test_two_processes_writing_one_output_both_finish_whole(tmp_path: Path) -> None:
    out = tmp_path / "rows.jsonl"
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_write_many, args=(str(out), tag, 20)) for tag in ("a", "b")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0, 0]
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 50 and len({(r["tag"], r["i"]) for r in rows}) == 1  # one whole file, not a mix
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rows.jsonl"]  # no temporary left behind


def test_a_failed_write_leaves_neither_temp_nor_destination(tmp_path: Path) -> None:
    out = tmp_path / "x.txt"
    with pytest.raises(RuntimeError), atomic_path(out) as tmp:
        tmp.write_text("half")
        raise RuntimeError("boom")
    assert list(tmp_path.iterdir()) == []


def test_writes_refuse_a_symlink_and_leave_its_target_alone(tmp_path: Path) -> None:
    target = tmp_path / "USER.txt"
    target.write_text("mine")
    link = tmp_path / "report.json"
    link.symlink_to(target)
    with pytest.raises(OutputError, match="symlink"):
        write_json(link, {"a": 1})
    assert target.read_text() == "mine" and link.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["USER.txt", "report.json"]


def test_output_error_is_bad_input() -> None:
    assert issubclass(OutputError, SplHfError) and issubclass(SplHfError, ValueError)


def test_write_text_is_exact(tmp_path: Path) -> None:
    path = write_text(tmp_path / "a" / "b.md", "x\r\ny")
    assert path.read_bytes() == b"x\r\ny"
