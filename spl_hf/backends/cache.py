"""Durable result cache: sqlite in WAL mode, keyed by a content hash of (model, template, inputs).

Each batch is one transaction with INSERT OR IGNORE, so a process killed at any point leaves every
committed result intact and nothing half-written, and several processes (data-parallel ranks) can
write to the same file; the first writer of a key wins and later identical results are ignored.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from spl_hf.errors import SplHfError


def content_key(kind: str, *parts: Any) -> str:
    """Stable key of JSON-serialisable parts (dict keys sorted, no whitespace)."""
    blob = json.dumps([kind, *parts], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()


SQLITE_HEADER = b"SQLite format 3\x00"


def check_cache_path(path: str | Path) -> Path:
    """A cache path that can be used: a new file in a writable folder, or an existing SQLite file.

    Raises ``ValueError`` naming the path otherwise, so a command fails before it loads a model —
    and a user's text file given by mistake is never turned into a database.
    """
    path = Path(path)
    if str(path) == "":
        raise SplHfError("--cache: the path is empty")
    if path.is_dir():
        raise SplHfError(f"{path}: is a folder; --cache takes a SQLite file path")
    if path.exists():
        try:
            with path.open("rb") as fh:
                head = fh.read(len(SQLITE_HEADER))
        except OSError as exc:
            raise SplHfError(f"{path}: cannot read the result cache ({exc.strerror})") from None
        if head and head != SQLITE_HEADER:
            raise SplHfError(f"{path}: not a SQLite result cache (refusing to use or overwrite it)")
        if not os.access(path, os.R_OK | os.W_OK):
            raise SplHfError(f"{path}: the result cache is not readable and writable")
        if head:
            _check_tables(path)
        probe = path.parent
    else:
        probe = path.parent
        while not probe.exists() and probe != probe.parent:
            probe = probe.parent
        if not probe.is_dir():
            raise SplHfError(f"{path}: cannot be created under {probe}, which is a file")
    # SQLite's WAL mode writes -wal/-shm files beside the cache.
    if not os.access(probe, os.W_OK | os.X_OK):
        raise SplHfError(f"{path}: folder {probe} is not writable")
    return path


def _check_tables(path: Path) -> None:
    try:
        con = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            tables = {name for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        finally:
            con.close()
    except sqlite3.Error as exc:
        raise SplHfError(f"{path}: cannot read the result cache ({exc})") from None
    if tables and "results" not in tables:
        raise SplHfError(
            f"{path}: a SQLite file that is not an spl_hf result cache (tables: {sorted(tables)})"
        )


class ResultCache:
    def __init__(self, path: str | Path, timeout_s: float = 120.0) -> None:
        self.path = check_cache_path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(str(self.path), timeout=timeout_s, isolation_level=None)
            self._db.execute(f"PRAGMA busy_timeout={int(timeout_s * 1000)}")
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS results (key TEXT PRIMARY KEY, kind TEXT NOT NULL, value TEXT NOT NULL)"
            )
            columns = {row[1] for row in self._db.execute("PRAGMA table_info(results)")}
        except sqlite3.Error as exc:
            raise SplHfError(f"{self.path}: cannot use as a result cache ({exc})") from None
        if not {"key", "kind", "value"} <= columns:
            self._db.close()
            raise SplHfError(f"{self.path}: a SQLite file that is not an spl_hf result cache")

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> ResultCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get_many(self, keys: Sequence[str]) -> dict[str, dict]:
        found: dict[str, dict] = {}
        for start in range(0, len(keys), 500):  # stay under sqlite's bound-parameter limit
            chunk = list(keys[start : start + 500])
            marks = ",".join("?" * len(chunk))
            for k, v in self._db.execute(f"SELECT key, value FROM results WHERE key IN ({marks})", chunk):
                found[k] = json.loads(v)
        return found

    def put_many(self, kind: str, items: Mapping[str, dict] | Iterable[tuple[str, dict]]) -> None:
        rows = [
            (k, kind, json.dumps(v, sort_keys=True, separators=(",", ":")))
            for k, v in (items.items() if isinstance(items, Mapping) else items)
        ]
        if not rows:
            return
        self._db.execute("BEGIN IMMEDIATE")
        try:
            self._db.executemany("INSERT OR IGNORE INTO results (key, kind, value) VALUES (?, ?, ?)", rows)
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise

    def count(self, kind: str | None = None) -> int:
        if kind is None:
            return int(self._db.execute("SELECT COUNT(*) FROM results").fetchone()[0])
        return int(self._db.execute("SELECT COUNT(*) FROM results WHERE kind = ?", (kind,)).fetchone()[0])


def run_cached(
    items: Sequence[Any],
    key: Callable[[Any], str],
    compute: Callable[[Any], Any],
    cache: ResultCache,
    kind: str,
    *,
    describe: Callable[[Any], dict[str, Any]],
    desc: str,
    progress: bool = True,
) -> dict[str, Any]:
    """Compute, in the given order, every item whose key the cache lacks; commit each result at once.

    A per-item :class:`InputError` is recorded in ``failures`` (with ``describe(item)`` and the
    reason) and not cached, so the item is re-checked, cheaply, on the next run.
    """
    from tqdm.auto import tqdm

    from spl_hf.backends.base import InputError

    keys = [key(it) for it in items]
    have = cache.get_many(keys)
    todo = [(it, k) for it, k in zip(items, keys) if k not in have]
    stats: dict[str, Any] = {"computed": 0, "cached": len(items) - len(todo), "failures": []}
    for it, k in tqdm(todo, unit="item", desc=desc, disable=not progress):
        try:
            result = compute(it)
        except InputError as exc:
            stats["failures"].append({**describe(it), "reason": str(exc)})
            continue
        cache.put_many(kind, {k: asdict(result)})
        stats["computed"] += 1
    return stats
