import multiprocessing as mp
import sqlite3
from pathlib import Path

from spl_hf.backends.cache import ResultCache, content_key


def test_content_key_is_canonical() -> None:
    assert content_key("judge", {"b": 1, "a": [1, 2]}) == content_key("judge", {"a": [1, 2], "b": 1})
    assert content_key("judge", "x") != content_key("label", "x")
    assert content_key("judge", "ab", "c") != content_key("judge", "a", "bc")


def test_first_write_wins_and_nothing_is_duplicated(tmp_path: Path) -> None:
    with ResultCache(tmp_path / "c.db") as cache:
        cache.put_many("judge", {"k1": {"v": 1}, "k2": {"v": 2}})
        cache.put_many("judge", {"k1": {"v": 99}, "k3": {"v": 3}})
        assert cache.get_many(["k1", "k2", "k3", "nope"]) == {"k1": {"v": 1}, "k2": {"v": 2}, "k3": {"v": 3}}
        assert cache.count() == 3 and cache.count("judge") == 3 and cache.count("label") == 0
    with sqlite3.connect(tmp_path / "c.db") as con:
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def _writer(path: str, offset: int) -> None:
    with ResultCache(path) as cache:
        for i in range(0, 200, 10):
            cache.put_many("judge", {f"k{j}": {"by": offset} for j in range(i + offset, i + offset + 10)})


def test_concurrent_writers_share_one_file(tmp_path: Path) -> None:
    path = str(tmp_path / "c.db")
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, off)) for off in (0, 5)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    with ResultCache(path) as cache:
        assert cache.count() == 205  # overlapping keys stored once
        assert len(cache.get_many([f"k{j}" for j in range(205)])) == 205
