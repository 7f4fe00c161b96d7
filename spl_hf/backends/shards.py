"""Results any node can write: content-addressed Parquet shard files in a folder on any fsspec filesystem.

A model stage's durable results are one Parquet file per shard, named by the SHA-256 of what fixes
its content (the stage's settings and its items' ids), written whole under a temporary name and
then moved into place. Two workers that compute the same shard write the same bytes under the same
name, so a retried task or a duplicated replica is harmless, and a reader never sees half a file.
Nothing is shared between processes but the folder itself (a local path, NFS, ``s3://``), so unlike
a SQLite database the store works across hosts.

The folder holds only what this module writes: a marker file, one sub-folder per stage kind with
shard files, and temporary files of killed writes. Anything else makes the store refuse the folder
(it never deletes what it did not write).
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from spl_hf.errors import SplHfError
from spl_hf.files import parquet_bytes

MARKER = "SPL_HF_RESULTS"
MARKER_TEXT = "spl_hf results folder: content-addressed shard files (one sub-folder per stage).\n"
SHARD_RE = re.compile(r"[0-9a-f]{64}\.parquet")
# atomic_path's random hidden sibling, and this module's own temporary names on other filesystems
TEMP_RE = re.compile(r"\.([0-9a-f]{64}\.parquet|probe)\.[0-9a-f]{12}\.partial")
KIND_RE = re.compile(r"[a-z][a-z0-9_]{0,40}")
COLUMNS = ("item", "status", "row", "reason")


class ResultsFolderError(SplHfError):
    """A results folder that cannot be used: not writable, or holding files spl_hf did not write."""


@dataclass(frozen=True)
class ShardRecord:
    """One item's stored outcome: ``ok`` with its output row, or ``failed``/``not_judged`` with why."""

    item: str
    status: str
    row: dict[str, Any] | None
    reason: str | None


def _fs(url: str) -> tuple[Any, str]:
    from fsspec.core import url_to_fs

    fs, path = url_to_fs(url)
    return fs, path.rstrip("/") or "/"


def _is_local(fs: Any) -> bool:
    from fsspec.implementations.local import LocalFileSystem

    return isinstance(fs, LocalFileSystem)


class ShardStore:
    """The results folder ``url``: checked (and created with its marker, unless ``create`` is off) when opened."""

    def __init__(self, url: str, create: bool = True) -> None:
        if not str(url).strip():
            raise ResultsFolderError("results folder: the path is empty")
        self.url = str(url)
        self.fs, self.root = _fs(self.url)
        self._check(create)
        import pyarrow.parquet  # noqa: F401 (loaded once here, not inside the first shard's write)

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        # Sent to remote replicas by URL; each process opens (and checks) the folder itself.
        return (ShardStore, (self.url,))

    # -- checks ---------------------------------------------------------------------------------
    def _check(self, create: bool) -> None:
        fs, root = self.fs, self.root
        try:
            if fs.exists(root) and not fs.isdir(root):
                raise ResultsFolderError(f"{self.url}: is a file; the results folder must be a folder")
            entries = fs.ls(root, detail=False) if fs.exists(root) else []
            if entries and not fs.exists(f"{root}/{MARKER}"):
                names = sorted(e.rstrip("/").rsplit("/", 1)[-1] for e in entries)[:5]
                raise ResultsFolderError(
                    f"{self.url}: not an spl_hf results folder (holds {names}, no {MARKER}); "
                    "choose an empty or new folder"
                )
            foreign = self.foreign()
            if foreign:
                raise ResultsFolderError(
                    f"{self.url}: holds files spl_hf did not write ({foreign[:5]}); refusing to use "
                    "the folder (nothing is deleted)"
                )
            if not create:  # a dry run: checked, nothing written
                return
            fs.makedirs(root, exist_ok=True)
            if not fs.exists(f"{root}/{MARKER}"):
                self._put(f"{root}/{MARKER}", MARKER_TEXT.encode())
            self._put(f"{root}/.probe.{secrets.token_hex(6)}.partial", b"", probe=True)
        except ResultsFolderError:
            raise
        except OSError as exc:
            raise ResultsFolderError(f"{self.url}: the results folder cannot be written ({exc})") from None

    def foreign(self) -> list[str]:
        """Paths under the folder that this module would never write."""
        fs, root = self.fs, self.root
        if not fs.exists(root):
            return []
        bad = []
        for entry in fs.ls(root, detail=True):
            name = entry["name"].rstrip("/").rsplit("/", 1)[-1]
            if entry["type"] == "directory" and KIND_RE.fullmatch(name):
                for sub in fs.ls(entry["name"], detail=True):
                    leaf = sub["name"].rstrip("/").rsplit("/", 1)[-1]
                    if sub["type"] != "file" or not (SHARD_RE.fullmatch(leaf) or TEMP_RE.fullmatch(leaf)):
                        bad.append(f"{name}/{leaf}")
            elif entry["type"] != "file" or not (name == MARKER or TEMP_RE.fullmatch(name)):
                bad.append(name)
        return sorted(bad)

    # -- shards ---------------------------------------------------------------------------------
    def path(self, kind: str, name: str) -> str:
        return f"{self.root}/{kind}/{name}.parquet"

    def finished(self, kind: str) -> set[str]:
        """Names of the shards of ``kind`` already in the folder."""
        folder = f"{self.root}/{kind}"
        if not self.fs.exists(folder):
            return set()
        leaves = (p.rstrip("/").rsplit("/", 1)[-1] for p in self.fs.ls(folder, detail=False))
        return {leaf.removesuffix(".parquet") for leaf in leaves if SHARD_RE.fullmatch(leaf)}

    def write(self, kind: str, name: str, records: Sequence[ShardRecord], engine: dict[str, Any]) -> None:
        self._put(self.path(kind, name), shard_bytes(records, engine))

    def read_table(self, kind: str, name: str) -> tuple[Any, dict[str, Any]]:
        """A shard as an Arrow table (``COLUMNS``, rows JSON) and the engine that computed it (backend, dtype)."""
        import pyarrow.parquet as pq

        path = self.path(kind, name)
        with self.fs.open(path, "rb") as fh:
            table = pq.read_table(fh)
        if tuple(table.column_names) != COLUMNS:
            raise ResultsFolderError(f"{path}: not an spl_hf shard (columns {table.column_names})")
        engine = json.loads((table.schema.metadata or {}).get(b"spl_hf_engine", b"{}"))
        return table, engine

    def read(self, kind: str, name: str) -> tuple[list[ShardRecord], dict[str, Any]]:
        """A shard's records and the engine that computed them (backend, dtype)."""
        table, engine = self.read_table(kind, name)
        return [
            ShardRecord(
                r["item"], r["status"], None if r["row"] is None else json.loads(r["row"]), r["reason"]
            )
            for r in table.to_pylist()
        ], engine

    def _put(self, path: str, data: bytes, probe: bool = False) -> None:
        """Write ``data`` whole, then move it to ``path`` (the local path: :func:`atomic_path`)."""
        if _is_local(self.fs):
            from pathlib import Path

            from spl_hf.files import atomic_path

            if probe:
                Path(path).write_bytes(data)
                Path(path).unlink()
                return
            with atomic_path(path) as tmp:
                tmp.write_bytes(data)
            return
        parent, leaf = path.rsplit("/", 1)
        tmp = path if probe else f"{parent}/.{leaf}.{secrets.token_hex(6)}.partial"
        self.fs.makedirs(parent, exist_ok=True)
        self.fs.pipe_file(tmp, data)
        if probe:
            self.fs.rm_file(tmp)
        else:
            self.fs.mv(tmp, path)


def shard_bytes(records: Sequence[ShardRecord], engine: dict[str, Any]) -> bytes:
    """A shard's Parquet bytes: the same records give the same bytes (fixed schema and writer settings)."""
    import pyarrow as pa

    meta = {b"spl_hf_engine": json.dumps(engine, sort_keys=True).encode()}
    schema = pa.schema([(c, pa.string()) for c in COLUMNS], metadata=meta)
    table = pa.table(
        {
            "item": [r.item for r in records],
            "status": [r.status for r in records],
            "row": [None if r.row is None else json.dumps(r.row, sort_keys=True) for r in records],
            "reason": [r.reason for r in records],
        },
        schema=schema,
    )
    return parquet_bytes(table)
