"""On-disk repository store of the local Hub server.

Layout under the root, per repo ``repos/<type>s/<org>/<name>/``:

- ``meta.json``: visibility and creation time.
- ``blobs/<sha256>``: file contents, content-addressed (an upload is written to ``tmp/`` and
  renamed into place only once its SHA-256 matched, so a blob is never half-written).
- ``commits/<sha>.json``: immutable commit objects (parents, message, full file tree).
- ``refs.json``: branch and pull-request heads.

A commit writes its blobs and commit object first and then replaces ``refs.json`` by renaming a
fully written temporary file over it: a process killed at any point leaves the repo at either the
previous or the new head, never in between. Each commit object also records the README's parsed
front matter (``cardData``), so reading a repo's info never parses YAML.

Every temporary file (an LFS upload in ``tmp/``, a ``.<name>.<random>`` beside a blob, commit or ref
file) is locked by its writer while it is written; :meth:`Store.sweep_temporaries` removes the ones
nobody holds any more, which a killed commit or upload leaves behind.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from spl_hf_hub_server.card import card_data
from spl_hf_hub_server.commit_ops import CommitPayload, Operation, file_folder_conflicts, forbidden
from spl_hf_hub_server.errors import StoreError
from spl_hf_hub_server.tempfiles import (
    SWEEP_MIN_AGE_S,
    TEMP_GLOBS,
    UPLOAD_PREFIX,
    remove_if_orphan,
    temp_file,
    write_atomic,
)

REPO_TYPES = ("dataset", "model", "space")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")
_SHA = re.compile(r"^[0-9a-f]{40}$")
_OID = re.compile(r"^[0-9a-f]{64}$")
_REF = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,127}$")
LFS_SUFFIXES = (".parquet", ".arrow", ".bin", ".safetensors", ".pt", ".zst", ".gz", ".zip", ".npy", ".h5")
LFS_MIN_SIZE = 10 * 1024 * 1024
README = "README.md"
_UNSET = object()  # a commit written before cardData was recorded


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
    card: object = _UNSET  # README front matter as JSON (None without one); _UNSET in older stores


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


class Store:
    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        (self.root / "repos").mkdir(parents=True, exist_ok=True)
        self._locks: dict[Path, threading.Lock] = {}
        self._locks_guard = threading.Lock()
        self._cards: dict[tuple[str, str, str], dict | None] = {}

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
        if not repo.is_dir():  # never created, or another type: the Hub's answer, not a server error
            raise StoreError(404, "Repository not found", "RepoNotFound")
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
            write_atomic(repo / "refs.json", json.dumps({"heads": {"main": sha}, "prs": []}).encode())
            # meta.json last: a repo exists only once it has a head.
            write_atomic(
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
        tag = revision.removeprefix("refs/tags/")
        if tag in refs.get("tags", {}):
            return refs["tags"][tag]["sha"]
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
            write_atomic(repo / "refs.json", json.dumps(refs).encode())

    def delete_branch(self, repo_type: str, repo_id: str, branch: str) -> None:
        if branch == "main":
            raise StoreError(403, "the main branch cannot be deleted")
        repo = self.repo_dir(repo_type, repo_id)
        with self._locked(repo):
            refs = self.refs(repo_type, repo_id)
            if branch.startswith("refs/") or branch not in refs["heads"]:
                raise StoreError(404, f"Invalid rev id: {branch}", "RevisionNotFound")
            del refs["heads"][branch]
            write_atomic(repo / "refs.json", json.dumps(refs).encode())

    def create_tag(self, repo_type: str, repo_id: str, tag: str, revision: str, message: str) -> None:
        """Tag the commit ``revision`` names; 409 when the tag exists."""
        if not _REF.match(tag) or _SHA.match(tag) or ".." in tag:
            raise StoreError(400, f"invalid tag name {tag!r}")
        repo = self.repo_dir(repo_type, repo_id)
        with self._locked(repo):
            sha = self.resolve(repo_type, repo_id, revision)
            refs = self.refs(repo_type, repo_id)
            tags = refs.setdefault("tags", {})
            if tag in tags or tag in refs["heads"]:
                raise StoreError(409, f"a tag or branch named {tag!r} already exists")
            tags[tag] = {"sha": sha, "message": message}
            write_atomic(repo / "refs.json", json.dumps(refs).encode())

    def delete_tag(self, repo_type: str, repo_id: str, tag: str) -> None:
        repo = self.repo_dir(repo_type, repo_id)
        with self._locked(repo):
            refs = self.refs(repo_type, repo_id)
            if tag not in refs.get("tags", {}):
                raise StoreError(404, f"Invalid rev id: {tag}", "RevisionNotFound")
            del refs["tags"][tag]
            write_atomic(repo / "refs.json", json.dumps(refs).encode())

    def set_private(self, repo_type: str, repo_id: str, private: bool) -> None:
        repo = self.repo_dir(repo_type, repo_id)
        with self._locked(repo):
            meta = self.meta(repo_type, repo_id)
            if meta is None:
                raise StoreError(404, "Repository not found", "RepoNotFound")
            meta["private"] = private
            write_atomic(repo / "meta.json", json.dumps(meta).encode())

    def delete_repo(self, repo_type: str, repo_id: str) -> None:
        """Remove the repo: meta.json first (it no longer exists), then its files."""
        repo = self.repo_dir(repo_type, repo_id)
        with self._locked(repo):
            if not (repo / "meta.json").is_file():
                raise StoreError(404, "Repository not found", "RepoNotFound")
            (repo / "meta.json").unlink()
            for sub in ("blobs", "commits", "tmp"):
                shutil.rmtree(repo / sub, ignore_errors=True)
            (repo / "refs.json").unlink(missing_ok=True)

    def list_repos(self, repo_type: str, author: str | None = None) -> list[str]:
        """Ids of the repos of ``repo_type``, of one author when given, sorted."""
        base = self.root / "repos" / f"{repo_type}s"
        orgs = [base / author] if author else sorted(base.glob("*"))
        return sorted(
            f"{org.name}/{repo.name}"
            for org in orgs
            if org.is_dir()
            for repo in org.iterdir()
            if (repo / "meta.json").is_file()
        )

    def commit(self, repo_type: str, repo_id: str, sha: str) -> Commit:
        path = self.repo_dir(repo_type, repo_id) / "commits" / f"{sha}.json"
        d = json.loads(path.read_text())
        # A path the Hub refuses (.git/, .cache/) that an older version of this server stored is
        # never served, and the next commit drops it.
        tree = {p: FileEntry(p, **e) for p, e in d["tree"].items() if not forbidden(p)}
        card = d.get("cardData", _UNSET)
        return Commit(sha, d["parents"], d["summary"], d["description"], d["date"], tree, card)

    def card(self, repo_type: str, repo_id: str, commit: Commit) -> dict | None:
        """The commit's cardData: recorded with the commit; parsed (within the limits) only for a
        commit stored before that, and then kept in memory."""
        if commit.card is not _UNSET:
            return commit.card  # type: ignore[return-value]
        key = (repo_type, repo_id, commit.sha)
        if key not in self._cards:
            try:
                self._cards[key] = self._readme_card(repo_type, repo_id, commit.tree)
            except StoreError:
                self._cards[key] = None  # unreadable metadata in an old commit: no cardData
        return self._cards[key]

    def _readme_card(
        self, repo_type: str, repo_id: str, tree: dict[str, FileEntry], added: dict[str, bytes] | None = None
    ) -> dict | None:
        entry = tree.get(README)
        if entry is None:
            return None
        if added and entry.oid in added:
            return card_data(added[entry.oid])
        with open(self.blob_path(repo_type, repo_id, entry.oid), "rb") as fh:
            return card_data(fh)

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
        with temp_file(dest.parent.parent / "tmp", UPLOAD_PREFIX) as (fh, tmp):
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

    def sweep_temporaries(self, min_age_s: float | None = None) -> tuple[int, int]:
        """Remove the temporary files a killed upload, commit or server left: (files, bytes).

        A writer holds an exclusive lock on its temporary file (in this or another server process on
        the same root), so only files nobody writes any more are removed. A file younger than
        ``min_age_s`` may have been created an instant ago, before its writer locked it; the server
        passes 0 at start-up when it knows that no other server process uses the root.
        """
        min_age_s = SWEEP_MIN_AGE_S if min_age_s is None else min_age_s
        files = size = 0
        for repo in (self.root / "repos").glob("*/*/*"):
            for path in (p for pattern in TEMP_GLOBS for p in repo.glob(pattern)):
                n = remove_if_orphan(path, min_age_s)
                if n is not None:
                    files, size = files + 1, size + n
        return files, size

    def _put_bytes(self, repo: Path, data: bytes) -> str:
        oid = hashlib.sha256(data).hexdigest()
        dest = repo / "blobs" / oid
        if not dest.is_file():
            write_atomic(dest, data)
        return oid

    # -- commits -----------------------------------------------------------------------------
    def _write_commit(
        self,
        repo: Path,
        parents: list[str],
        summary: str,
        description: str,
        tree: dict[str, FileEntry],
        card: dict | None = None,
    ) -> str:
        body = {
            "cardData": card,
            "parents": parents,
            "summary": summary,
            "description": description,
            "date": time.time(),
            "tree": {p: tree[p].to_dict() for p in sorted(tree)},
        }
        data = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
        sha = hashlib.sha1(b"commit %d\0" % len(data) + data).hexdigest()
        write_atomic(repo / "commits" / f"{sha}.json", data)
        return sha

    def apply_commit(
        self,
        repo_type: str,
        repo_id: str,
        revision: str,
        payload: CommitPayload,
        create_pr: bool = False,
    ) -> tuple[str, int | None]:
        """Apply validated commit operations on top of ``revision``; returns (commit sha, PR number)."""
        repo = self.repo_dir(repo_type, repo_id)
        with self._locked(repo):
            refs = self.refs(repo_type, repo_id)
            head = self.resolve(repo_type, repo_id, revision)
            branch = revision.removeprefix("refs/heads/")
            if not create_pr and branch not in refs["heads"]:
                raise StoreError(400, f"cannot commit to {revision!r}: not a branch", "RevisionNotFound")
            if payload.parent and payload.parent != head:
                raise StoreError(
                    412,
                    f"A commit has happened since {payload.parent}: {revision} is now at {head}. "
                    "Retry on top of it.",
                )
            parent = self.commit(repo_type, repo_id, head)
            tree = dict(parent.tree)
            added: dict[str, bytes] = {}  # inline contents, stored only once the whole commit is valid
            for op in payload.operations:
                self._apply(repo_type, repo_id, tree, op, added)
            conflicts = file_folder_conflicts(tree, {op.path for op in payload.operations})
            if conflicts:
                raise StoreError(422, f"paths would be both a file and a folder: {conflicts[:5]}")
            card = self._commit_card(repo_type, repo_id, parent, tree, added)  # may refuse the README
            for data in added.values():
                self._put_bytes(repo, data)
            sha = self._write_commit(repo, [head], payload.summary, payload.description, tree, card)
            pr_num = None
            if create_pr:
                pr_num = len(refs["prs"]) + 1
                refs["prs"].append({"num": pr_num, "base": branch, "title": payload.summary})
                refs["heads"][f"refs/pr/{pr_num}"] = sha
            else:
                refs["heads"][branch] = sha
            write_atomic(repo / "refs.json", json.dumps(refs).encode())
            return sha, pr_num

    def _commit_card(
        self,
        repo_type: str,
        repo_id: str,
        parent: Commit,
        tree: dict[str, FileEntry],
        added: dict[str, bytes],
    ) -> dict | None:
        """The new commit's cardData: the parent's when the README is unchanged, else parsed once."""
        new, old = tree.get(README), parent.tree.get(README)
        if new is not None and old is not None and new.oid == old.oid and parent.card is not _UNSET:
            return parent.card  # type: ignore[return-value]
        return self._readme_card(repo_type, repo_id, tree, added)

    def _apply(
        self, repo_type: str, repo_id: str, tree: dict[str, FileEntry], op: Operation, added: dict[str, bytes]
    ) -> None:
        path = op.path
        if op.key == "file":
            data = op.content or b""
            oid = hashlib.sha256(data).hexdigest()
            added[oid] = data
            tree[path] = FileEntry(path, oid, len(data), False, git_blob_id(data))
        elif op.key == "lfsFile":
            oid = str(op.oid)
            if not self.has_blob(repo_type, repo_id, oid):
                raise StoreError(422, f"{path}: LFS object {oid} was not uploaded")
            size = self.blob_path(repo_type, repo_id, oid).stat().st_size
            if op.size is not None and op.size != size:
                raise StoreError(422, f"{path}: LFS object {oid} has {size} bytes, not {op.size}")
            tree[path] = FileEntry(path, oid, size, True, git_blob_id(lfs_pointer(oid, size)))
        elif op.key == "deletedFile":
            if path not in tree:
                raise StoreError(404, f"A file with this name doesn't exist: {path}", "EntryNotFound")
            del tree[path]
        else:  # deletedFolder
            gone = [p for p in tree if p.startswith(path + "/")]
            if not gone:
                raise StoreError(404, f"A folder with this name doesn't exist: {path}", "EntryNotFound")
            for p in gone:
                del tree[p]


def _drain(stream: BinaryIO, size: int) -> None:
    while size:
        block = stream.read(min(size, 1 << 20))
        if not block:
            return
        size -= len(block)
