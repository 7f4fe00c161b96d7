"""On-disk repository store of the local Hub server.

Layout under the root, per repo ``repos/<type>s/<org>/<name>/``:

- ``meta.json``: visibility and creation time.
- ``blobs/<sha256>``: file contents, content-addressed (an upload is written to ``tmp/`` and
  renamed into place only once its SHA-256 matched, so a blob is never half-written).
- ``commits/<sha>.json``: immutable commit objects (parents, message, full file tree).
- ``refs.json``: branch and pull-request heads.

A commit writes its blobs and commit object first and then replaces ``refs.json`` by renaming a
fully written temporary file over it: a process killed at any point leaves the repo at either the
previous or the new head, never in between.
"""

from __future__ import annotations

import base64
import fcntl
import hashlib
import json
import os
import re
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

REPO_TYPES = ("dataset", "model", "space")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")
_SHA = re.compile(r"^[0-9a-f]{40}$")
_OID = re.compile(r"^[0-9a-f]{64}$")
LFS_SUFFIXES = (".parquet", ".arrow", ".bin", ".safetensors", ".pt", ".zst", ".gz", ".zip", ".npy", ".h5")
LFS_MIN_SIZE = 10 * 1024 * 1024


class StoreError(Exception):
    """An error with the HTTP status and Hub error code a client expects for it."""

    def __init__(self, status: int, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


@dataclass(frozen=True)
class FileEntry:
    path: str
    oid: str  # sha256 of the content
    size: int
    lfs: bool
    blob_id: str  # git object id: of the content, or of the LFS pointer for LFS files

    def to_dict(self) -> dict:
        return {"oid": self.oid, "size": self.size, "lfs": self.lfs, "blob_id": self.blob_id}


@dataclass(frozen=True)
class Commit:
    sha: str
    parents: list[str]
    summary: str
    description: str
    date: float
    tree: dict[str, FileEntry]


def git_blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def lfs_pointer(oid: str, size: int) -> bytes:
    return f"version https://git-lfs.github.com/spec/v1\noid sha256:{oid}\nsize {size}\n".encode()


def upload_mode(path: str, size: int, sample: bytes) -> str:
    """``lfs`` for data files, large files and binary content; ``regular`` for small text."""
    if path.endswith(LFS_SUFFIXES) or size >= LFS_MIN_SIZE or b"\0" in sample:
        return "lfs"
    return "regular"


def check_repo_id(repo_id: str) -> tuple[str, str]:
    parts = repo_id.split("/")
    if len(parts) != 2 or not all(_NAME.match(p) for p in parts) or any(".." in p for p in parts):
        raise StoreError(400, f"invalid repo id {repo_id!r}: expected ORG/NAME")
    return parts[0], parts[1]


def _write_atomic(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


class Store:
    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        (self.root / "repos").mkdir(parents=True, exist_ok=True)
        self._locks: dict[Path, threading.Lock] = {}
        self._locks_guard = threading.Lock()

    # -- repos -------------------------------------------------------------------------------
    def repo_dir(self, repo_type: str, repo_id: str) -> Path:
        if repo_type not in REPO_TYPES:
            raise StoreError(400, f"invalid repo type {repo_type!r}")
        org, name = check_repo_id(repo_id)
        return self.root / "repos" / f"{repo_type}s" / org / name

    @contextmanager
    def _locked(self, repo: Path) -> Iterator[None]:
        # Thread lock for this process, file lock for another server process on the same root.
        with self._locks_guard:
            lock = self._locks.setdefault(repo, threading.Lock())
        with lock, open(repo / ".lock", "a") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def meta(self, repo_type: str, repo_id: str) -> dict | None:
        path = self.repo_dir(repo_type, repo_id) / "meta.json"
        return json.loads(path.read_text()) if path.is_file() else None

    def create(self, repo_type: str, repo_id: str, private: bool) -> bool:
        """Create the repo with an empty initial commit on ``main``; False when it already exists."""
        repo = self.repo_dir(repo_type, repo_id)
        repo.mkdir(parents=True, exist_ok=True)
        with self._locked(repo):
            if (repo / "meta.json").is_file():
                return False
            for sub in ("blobs", "commits", "tmp"):
                (repo / sub).mkdir(exist_ok=True)
            sha = self._write_commit(repo, [], "initial commit", "", {})
            _write_atomic(repo / "refs.json", json.dumps({"heads": {"main": sha}, "prs": []}).encode())
            # meta.json last: a repo exists only once it has a head.
            _write_atomic(
                repo / "meta.json", json.dumps({"private": private, "created": time.time()}).encode()
            )
            return True

    def refs(self, repo_type: str, repo_id: str) -> dict:
        return json.loads((self.repo_dir(repo_type, repo_id) / "refs.json").read_text())

    def resolve(self, repo_type: str, repo_id: str, revision: str) -> str:
        """The commit sha a branch, ``refs/pr/N`` or commit sha names; 404 RevisionNotFound otherwise."""
        repo = self.repo_dir(repo_type, repo_id)
        refs = self.refs(repo_type, repo_id)
        ref = revision.removeprefix("refs/heads/")
        if ref in refs["heads"]:
            return refs["heads"][ref]
        if _SHA.match(revision) and (repo / "commits" / f"{revision}.json").is_file():
            return revision
        raise StoreError(404, f"Invalid rev id: {revision}", "RevisionNotFound")

    def create_branch(self, repo_type: str, repo_id: str, branch: str, start: str) -> None:
        """A new branch at commit ``start``; 409 when it exists."""
        if not branch or branch.startswith(("refs/", "/")) or ".." in branch or _SHA.match(branch):
            raise StoreError(400, f"invalid branch name {branch!r}")
        repo = self.repo_dir(repo_type, repo_id)
        with self._locked(repo):
            refs = self.refs(repo_type, repo_id)
            if branch in refs["heads"]:
                raise StoreError(409, f"branch {branch!r} already exists")
            refs["heads"][branch] = start
            _write_atomic(repo / "refs.json", json.dumps(refs).encode())

    def commit(self, repo_type: str, repo_id: str, sha: str) -> Commit:
        path = self.repo_dir(repo_type, repo_id) / "commits" / f"{sha}.json"
        d = json.loads(path.read_text())
        tree = {p: FileEntry(p, **e) for p, e in d["tree"].items()}
        return Commit(sha, d["parents"], d["summary"], d["description"], d["date"], tree)

    def history(self, repo_type: str, repo_id: str, sha: str) -> list[Commit]:
        out = []
        while sha:
            c = self.commit(repo_type, repo_id, sha)
            out.append(c)
            sha = c.parents[0] if c.parents else ""
        return out

    # -- blobs -------------------------------------------------------------------------------
    def blob_path(self, repo_type: str, repo_id: str, oid: str) -> Path:
        if not _OID.match(oid):
            raise StoreError(400, f"invalid oid {oid!r}")
        return self.repo_dir(repo_type, repo_id) / "blobs" / oid

    def has_blob(self, repo_type: str, repo_id: str, oid: str, size: int | None = None) -> bool:
        path = self.blob_path(repo_type, repo_id, oid)
        return path.is_file() and (size is None or path.stat().st_size == size)

    def put_blob(self, repo_type: str, repo_id: str, oid: str, size: int, stream: BinaryIO) -> None:
        """Store ``size`` bytes from ``stream`` as blob ``oid``; refuses content whose hash differs."""
        dest = self.blob_path(repo_type, repo_id, oid)
        if dest.is_file():
            _drain(stream, size)
            return
        h = hashlib.sha256()
        fd, tmp = tempfile.mkstemp(dir=dest.parent.parent / "tmp")
        try:
            with os.fdopen(fd, "wb") as fh:
                left = size
                while left:
                    block = stream.read(min(left, 1 << 20))
                    if not block:
                        raise StoreError(400, f"upload of {oid} ended after {size - left} of {size} bytes")
                    h.update(block)
                    fh.write(block)
                    left -= len(block)
                fh.flush()
                os.fsync(fh.fileno())
            if h.hexdigest() != oid:
                raise StoreError(400, f"uploaded content hashes to {h.hexdigest()}, not {oid}")
            os.replace(tmp, dest)
        finally:
            Path(tmp).unlink(missing_ok=True)

    def _put_bytes(self, repo: Path, data: bytes) -> str:
        oid = hashlib.sha256(data).hexdigest()
        dest = repo / "blobs" / oid
        if not dest.is_file():
            _write_atomic(dest, data)
        return oid

    # -- commits -----------------------------------------------------------------------------
    def _write_commit(
        self, repo: Path, parents: list[str], summary: str, description: str, tree: dict[str, FileEntry]
    ) -> str:
        body = {
            "parents": parents,
            "summary": summary,
            "description": description,
            "date": time.time(),
            "tree": {p: tree[p].to_dict() for p in sorted(tree)},
        }
        data = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
        sha = hashlib.sha1(b"commit %d\0" % len(data) + data).hexdigest()
        _write_atomic(repo / "commits" / f"{sha}.json", data)
        return sha

    def apply_commit(
        self,
        repo_type: str,
        repo_id: str,
        revision: str,
        header: dict,
        operations: list[dict],
        create_pr: bool = False,
    ) -> tuple[str, int | None]:
        """Apply NDJSON commit operations on top of ``revision``; returns (commit sha, PR number)."""
        repo = self.repo_dir(repo_type, repo_id)
        with self._locked(repo):
            refs = self.refs(repo_type, repo_id)
            head = self.resolve(repo_type, repo_id, revision)
            branch = revision.removeprefix("refs/heads/")
            if not create_pr and branch not in refs["heads"]:
                raise StoreError(400, f"cannot commit to {revision!r}: not a branch", "RevisionNotFound")
            parent = header.get("parentCommit")
            if parent and parent != head:
                raise StoreError(
                    412,
                    f"A commit has happened since {parent}: {revision} is now at {head}. Retry on top of it.",
                )
            tree = dict(self.commit(repo_type, repo_id, head).tree)
            for op in operations:
                self._apply(repo, repo_type, repo_id, tree, op)
            summary = str(header.get("summary") or "").strip()
            if not summary:
                raise StoreError(400, "commit summary is empty")
            sha = self._write_commit(repo, [head], summary, str(header.get("description") or ""), tree)
            pr_num = None
            if create_pr:
                pr_num = len(refs["prs"]) + 1
                refs["prs"].append({"num": pr_num, "base": branch, "title": summary})
                refs["heads"][f"refs/pr/{pr_num}"] = sha
            else:
                refs["heads"][branch] = sha
            _write_atomic(repo / "refs.json", json.dumps(refs).encode())
            return sha, pr_num

    def _apply(self, repo: Path, repo_type: str, repo_id: str, tree: dict[str, FileEntry], op: dict) -> None:
        key, value = op.get("key"), op.get("value") or {}
        path = str(value.get("path", "")).strip("/")
        if key in ("file", "lfsFile", "deletedFile") and not _safe_path(path):
            raise StoreError(400, f"invalid path in repo: {value.get('path')!r}")
        if key == "file":
            if value.get("encoding", "base64") != "base64":
                raise StoreError(400, f"{path}: unsupported encoding {value.get('encoding')!r}")
            data = base64.b64decode(value.get("content", ""), validate=True)
            oid = self._put_bytes(repo, data)
            tree[path] = FileEntry(path, oid, len(data), False, git_blob_id(data))
        elif key == "lfsFile":
            oid = str(value.get("oid", ""))
            if value.get("algo", "sha256") != "sha256" or not self.has_blob(repo_type, repo_id, oid):
                raise StoreError(422, f"{path}: LFS object {oid} was not uploaded")
            size = self.blob_path(repo_type, repo_id, oid).stat().st_size
            tree[path] = FileEntry(path, oid, size, True, git_blob_id(lfs_pointer(oid, size)))
        elif key == "deletedFile":
            if path not in tree:
                raise StoreError(404, f"A file with this name doesn't exist: {path}", "EntryNotFound")
            del tree[path]
        elif key == "deletedFolder":
            prefix = path + "/"
            gone = [p for p in tree if p.startswith(prefix)]
            if not gone:
                raise StoreError(404, f"A folder with this name doesn't exist: {path}", "EntryNotFound")
            for p in gone:
                del tree[p]
        else:
            raise StoreError(400, f"unsupported commit operation {key!r}")


def _safe_path(path: str) -> bool:
    parts = path.split("/")
    return (
        bool(path) and all(p not in ("", ".", "..") for p in parts) and "\\" not in path and "\0" not in path
    )


def _drain(stream: BinaryIO, size: int) -> None:
    while size:
        block = stream.read(min(size, 1 << 20))
        if not block:
            return
        size -= len(block)
