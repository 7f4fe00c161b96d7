"""Results any node can write: content-addressed Parquet shard files in a folder on any fsspec filesystem.

A model stage's durable results are one Parquet file per shard, named by the SHA-256 of what fixes
its content (the stage's settings and its items' ids), written whole under a temporary name and
then moved into place. Two workers that compute the same shard write the same bytes under the same
name, so a retried task or a duplicated replica is harmless, and a reader never sees half a file.
Nothing is shared between processes but the folder itself (a local path, NFS, ``s3://``), so unlike
a SQLite database the store works across hosts.

The folder holds only what this module writes: a marker file, one sub-folder per stage kind with
shard files, shard-local journals of unfinished shards (local folders), and temporary files of
killed writes. Anything else makes the store refuse the folder
(it never deletes what it did not write).
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from spl_hf.errors import SplHfError
from spl_hf.files import parquet_bytes

MARKER = "SPL_HF_RESULTS"
MARKER_TEXT = "spl_hf results folder: content-addressed shard files (one sub-folder per stage).\n"
SHARD_RE = re.compile(r"[0-9a-f]{64}\.parquet")
# atomic_path's random hidden sibling, and this module's own temporary names on other filesystems
TEMP_RE = re.compile(r"\.([0-9a-f]{64}\.parquet|probe)\.[0-9a-f]{12}\.partial")
# the finished items of a shard still being computed (see :class:`Journal`)
JOURNAL_RE = re.compile(r"\.[0-9a-f]{64}\.journal")
# Object stores where one PUT is atomic (an object is visible whole or not at all): a shard is one
# request there, where a temporary name and a move would take four (PUT, HEAD, COPY, DELETE).
ATOMIC_PUT = frozenset({"s3", "s3a", "gs", "gcs", "abfs", "abfss", "az", "adl", "oss"})
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

    @cached_property
    def row_json(self) -> str | None:
        """The row as the shard stores it (keys sorted): encoded once, for the journal and the shard."""
        return None if self.row is None else _ROW_ENCODER.encode(self.row)

    def journal_line(self) -> str:
        """``[item, status, row, reason]`` as one JSON line, the row spliced in from :attr:`row_json`."""
        head = _LINE_ENCODER.encode([self.item, self.status])[:-1]
        row = "null" if self.row_json is None else self.row_json
        return f"{head}, {row}, {_LINE_ENCODER.encode(self.reason)}]\n"


# One encoder each, built once: json.dumps builds a new one per call (a sixth of its time per row).
_ROW_ENCODER = json.JSONEncoder(sort_keys=True)
_LINE_ENCODER = json.JSONEncoder(ensure_ascii=False)


def _fs(url: str) -> tuple[Any, str]:
    from fsspec.core import url_to_fs

    fs, path = url_to_fs(url)
    return fs, path.rstrip("/") or "/"


def _is_local(fs: Any) -> bool:
    from fsspec.implementations.local import LocalFileSystem

    return isinstance(fs, LocalFileSystem)


def _protocols(fs: Any) -> set[str]:
    proto = fs.protocol
    return {proto} if isinstance(proto, str) else set(proto)


class ShardStore:
    """The results folder ``url``: checked (and created with its marker, unless ``create`` is off) when opened.

    ``attach``: open a folder the driver has already opened (a replica's copy): it must hold the
    marker, else the replica does not see the driver's folder and is refused before any work.
    """

    def __init__(self, url: str, create: bool = True, attach: bool = False) -> None:
        if not str(url).strip():
            raise ResultsFolderError("results folder: the path is empty")
        self.fs, self.root = _fs(str(url))
        # A local path is resolved here, on the driver: a replica must never resolve a relative path
        # against its own working directory (it would write a folder nobody reads).
        self.url = self.root if _is_local(self.fs) else str(url)
        self.atomic_put = bool(_protocols(self.fs) & ATOMIC_PUT)
        self._made: set[str] = set()
        if attach:
            self._attach()
        else:
            self._check(create)
        import pyarrow.parquet  # noqa: F401 (loaded once here, not inside the first shard's write)

    def __reduce__(self) -> tuple[Any, tuple[str, bool, bool]]:
        # Sent to remote replicas by (resolved) URL; each opens the driver's folder, never a new one.
        return (ShardStore, (self.url, False, True))

    def _attach(self) -> None:
        try:
            found = self.fs.exists(f"{self.root}/{MARKER}")
        except OSError as exc:
            raise ResultsFolderError(f"{self.url}: the results folder cannot be read here ({exc})") from None
        if not found:
            raise ResultsFolderError(
                f"{self.url}: this node does not see the driver's results folder (no {MARKER}); use a "
                "folder every node shares (NFS, s3://, gs://)"
            )

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
            if not create:  # a dry run: checked, nothing left behind
                self._check_writable()
                return
            fs.makedirs(root, exist_ok=True)
            if not fs.exists(f"{root}/{MARKER}"):
                self._put(f"{root}/{MARKER}", MARKER_TEXT.encode())
            self._put(f"{root}/.probe.{secrets.token_hex(6)}.partial", b"", probe=True)
        except ResultsFolderError:
            raise
        except OSError as exc:
            raise ResultsFolderError(f"{self.url}: the results folder cannot be written ({exc})") from None

    def _check_writable(self) -> None:
        """A dry run's check that the folder could be written, leaving nothing (not even the folder)."""
        if _is_local(self.fs):
            import os
            from pathlib import Path

            here = Path(self.root)
            while not here.exists():
                here = here.parent
            if not here.is_dir() or not os.access(here, os.W_OK | os.X_OK):
                raise ResultsFolderError(
                    f"{self.url}: the results folder cannot be written ({here} is not a writable folder)"
                )
            if here != Path(self.root):
                return
        self.take_probe(self.write_probe("dry run"))

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
                    ours = SHARD_RE.fullmatch(leaf) or TEMP_RE.fullmatch(leaf) or JOURNAL_RE.fullmatch(leaf)
                    if sub["type"] != "file" or not ours:
                        bad.append(f"{name}/{leaf}")
            elif entry["type"] != "file" or not (name == MARKER or TEMP_RE.fullmatch(name)):
                bad.append(name)
        return sorted(bad)

    # -- shards ---------------------------------------------------------------------------------
    def path(self, kind: str, name: str) -> str:
        return f"{self.root}/{kind}/{name}.parquet"

    def refresh(self, kind: str | None = None) -> None:
        """Forget cached listings (s3fs, gcsfs cache them): other processes have written shards since.

        Without it a listing taken before the replicas wrote makes s3fs refuse a shard that S3 holds.
        """
        self.fs.invalidate_cache(f"{self.root}/{kind}" if kind else self.root)

    def finished(self, kind: str) -> set[str]:
        """Names of the shards of ``kind`` already in the folder (one fresh listing)."""
        folder = f"{self.root}/{kind}"
        self.refresh(kind)
        if not self.fs.exists(folder):
            return set()
        leaves = (p.rstrip("/").rsplit("/", 1)[-1] for p in self.fs.ls(folder, detail=False))
        return {leaf.removesuffix(".parquet") for leaf in leaves if SHARD_RE.fullmatch(leaf)}

    def write(self, kind: str, name: str, records: Sequence[ShardRecord], engine: dict[str, Any]) -> None:
        self._put(self.path(kind, name), shard_bytes(records, engine))
        journal = self.journal(kind, name)
        if journal is not None:
            journal.discard()  # the shard has landed: its journal says nothing more

    def journal(self, kind: str, name: str) -> Journal | None:
        """The journal of shard ``name`` (its finished items so far); None on an object store.

        An object store has no append: a journal there would cost a request per engine call, more
        than the shards themselves, so there the unit of resume is the shard.
        """
        if not _is_local(self.fs):
            return None
        from pathlib import Path

        return Journal(Path(f"{self.root}/{kind}/.{name}.journal"))

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

    # -- probes: can every node write here, and the driver read what they wrote? ----------------
    def write_probe(self, text: str) -> str:
        """A probe file holding ``text`` (its name is returned); the driver reads and removes it."""
        name = f".probe.{secrets.token_hex(6)}.partial"
        path = f"{self.root}/{name}"
        try:
            if _is_local(self.fs):
                from pathlib import Path

                Path(path).write_text(text, encoding="utf-8")
            else:
                self.fs.pipe_file(path, text.encode())
        except OSError as exc:
            raise ResultsFolderError(f"{self.url}: the results folder cannot be written ({exc})") from None
        return name

    def take_probe(self, name: str) -> str | None:
        """The text of probe ``name`` (None when this process cannot see it), removed after reading."""
        if not TEMP_RE.fullmatch(name) or not name.startswith(".probe."):
            # the names come from write_probe in this program: another one is a bug, not bad input
            raise RuntimeError(f"not a probe name: {name!r}")
        path = f"{self.root}/{name}"
        self.refresh()
        try:
            with self.fs.open(path, "rb") as fh:
                text = fh.read().decode("utf-8", "replace")
        except FileNotFoundError:
            return None
        self.fs.rm_file(path)
        return text

    def _put(self, path: str, data: bytes, probe: bool = False) -> None:
        """Write ``data`` whole at ``path``: local, :func:`atomic_path`; an object store, one PUT."""
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
        if self.atomic_put and not probe:  # no folders to make, no rename needed
            self.fs.pipe_file(path, data)
            return
        tmp = path if probe else f"{parent}/.{leaf}.{secrets.token_hex(6)}.partial"
        if parent not in self._made:
            self.fs.makedirs(parent, exist_ok=True)
            self._made.add(parent)
        self.fs.pipe_file(tmp, data)
        if probe:
            self.fs.rm_file(tmp)
        else:
            self.fs.mv(tmp, path)


@dataclass(frozen=True)
class Journal:
    """A shard's finished items while it is computed: one JSON line per item, appended per engine call.

    Read back on resume so that an interrupt loses at most the engine call in flight; discarded
    once the shard lands. A line cut off by a kill (no newline) is ignored; the records it holds are
    the values the shard would hold, so a resumed shard has the uninterrupted run's bytes.
    """

    path: Any

    def load(self) -> dict[str, ShardRecord]:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return {}
        out: dict[str, ShardRecord] = {}
        for line in data.split(b"\n")[:-1]:  # the last piece is empty or a torn line
            try:
                item, status, row, reason = json.loads(line)
            except ValueError:
                break  # damage: keep what came before, recompute the rest
            out[item] = ShardRecord(item, status, row, reason)
        return out

    def append(self, records: Sequence[ShardRecord]) -> None:
        import os

        text = "".join(r.journal_line() for r in records)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            os.write(fd, text.encode())  # one write of whole lines: a kill leaves no half of an earlier one
        finally:
            os.close(fd)

    def discard(self) -> None:
        self.path.unlink(missing_ok=True)


def shard_bytes(records: Sequence[ShardRecord], engine: dict[str, Any]) -> bytes:
    """A shard's Parquet bytes: the same records give the same bytes (fixed schema and writer settings)."""
    import pyarrow as pa

    meta = {b"spl_hf_engine": json.dumps(engine, sort_keys=True).encode()}
    schema = pa.schema([(c, pa.string()) for c in COLUMNS], metadata=meta)
    table = pa.table(
        {
            "item": [r.item for r in records],
            "status": [r.status for r in records],
            "row": [r.row_json for r in records],
            "reason": [r.reason for r in records],
        },
        schema=schema,
    )
    return parquet_bytes(table)
