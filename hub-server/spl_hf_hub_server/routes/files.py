"""Routes that list and read files: tree, paths-info and resolve (downloads, with ranges)."""

from __future__ import annotations

import hashlib
import itertools
import re
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, unquote

from spl_hf_hub_server.errors import StoreError
from spl_hf_hub_server.routes.common import iso
from spl_hf_hub_server.store import Commit, FileEntry, lfs_pointer

if TYPE_CHECKING:
    from spl_hf_hub_server.routes.common import Request

_RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")


def _folders(paths: object) -> set[str]:
    return {"/".join(p.split("/")[:i]) for p in paths for i in range(1, p.count("/") + 1)}


def _file_info(e: FileEntry, last: dict | None) -> dict:
    d: dict = {"type": "file", "oid": e.blob_id, "size": e.size, "path": e.path}
    if e.lfs:
        d["lfs"] = {"oid": e.oid, "size": e.size, "pointerSize": len(lfs_pointer(e.oid, e.size))}
    if last is not None:
        d["lastCommit"] = last
    return d


def _dir_info(tree: dict[str, FileEntry], path: str, last: dict | None) -> dict:
    listing = "".join(f"{p}:{e.blob_id}\n" for p, e in sorted(tree.items()) if p.startswith(path + "/"))
    d: dict = {
        "type": "directory",
        "oid": hashlib.sha1(listing.encode()).hexdigest(),
        "size": 0,
        "path": path,
    }
    if last is not None:
        d["lastCommit"] = last
    return d


def last_commits(history: list[Commit], paths: list[str]) -> dict[str, dict]:
    """The newest commit that changed each of ``paths`` (a file, or anything under a folder).

    One walk down the history, diffing each commit with its parent once: the cost is commits x files
    for the whole listing, not per path (a listing of every file of a long history stays fast).
    """
    pending, found = set(paths), {}
    for newer, older in itertools.pairwise(history):
        if not pending:
            break
        changed = {
            p
            for p in newer.tree.keys() | older.tree.keys()
            if getattr(newer.tree.get(p), "oid", None) != getattr(older.tree.get(p), "oid", None)
        }
        touched = pending & (changed | _folders(changed))
        for p in touched:
            found[p] = newer
        pending -= touched
    for p in pending:
        found[p] = history[-1]
    return {p: {"id": c.sha, "title": c.summary, "date": iso(c.date)} for p, c in found.items()}


def tree(h: Request, t: str, org: str, name: str, revision: str, path: str | None) -> None:
    repo_type, repo_id = h.repo(t, org, name)
    sha = h.store.resolve(repo_type, repo_id, unquote(revision))
    files = h.store.commit(repo_type, repo_id, sha).tree
    dirs = _folders(files)
    root = unquote(path or "").strip("/")
    if root and root not in dirs:
        raise StoreError(404, f"{root} does not exist at {sha}", "EntryNotFound")
    recursive = h.flag("recursive")
    prefix = root + "/" if root else ""

    def wanted(p: str) -> bool:
        return p.startswith(prefix) and (recursive or "/" not in p[len(prefix) :])

    listed_dirs = [d for d in sorted(dirs) if wanted(d)]
    listed_files = [p for p in sorted(files) if wanted(p)]
    last: dict[str, dict] = {}
    if h.flag("expand"):
        last = last_commits(h.store.history(repo_type, repo_id, sha), listed_dirs + listed_files)
    out = [_dir_info(files, d, last.get(d)) for d in listed_dirs]
    out += [_file_info(files[p], last.get(p)) for p in listed_files]
    h.json(out)


def paths_info(h: Request, t: str, org: str, name: str, revision: str) -> None:
    repo_type, repo_id = h.repo(t, org, name)  # before the body: a private repo reads nothing
    form = parse_qs(h.body().decode("utf-8", "replace"))
    sha = h.store.resolve(repo_type, repo_id, unquote(revision))
    files = h.store.commit(repo_type, repo_id, sha).tree
    dirs = _folders(files)
    paths = [p.strip("/") for p in form.get("paths", [])]
    paths = [p for p in paths if p in files or p in dirs]
    last: dict[str, dict] = {}
    if form.get("expand", ["false"])[0].lower() in ("1", "true"):
        last = last_commits(h.store.history(repo_type, repo_id, sha), paths)
    h.json(
        [_file_info(files[p], last.get(p)) if p in files else _dir_info(files, p, last.get(p)) for p in paths]
    )


def resolve(h: Request, prefix: str | None, org: str, name: str, revision: str, path: str) -> None:
    repo_type, repo_id = h.repo(prefix, org, name)
    sha = h.store.resolve(repo_type, repo_id, unquote(revision))
    entry = h.store.commit(repo_type, repo_id, sha).tree.get(unquote(path))
    if entry is None:
        raise StoreError(404, f"Entry not found: {unquote(path)} at {sha}", "EntryNotFound")
    etag = entry.oid if entry.lfs else entry.blob_id
    headers = {
        "ETag": f'"{etag}"',
        "X-Repo-Commit": sha,
        "Accept-Ranges": "bytes",
        "Content-Type": "application/octet-stream",
    }
    if entry.lfs:
        headers.update({"X-Linked-Etag": f'"{entry.oid}"', "X-Linked-Size": str(entry.size)})
    start, end, status = 0, entry.size - 1, 200
    rng = h.headers.get("Range")
    if rng:
        m = _RANGE.match(rng.strip())
        if not m or (not m.group(1) and not m.group(2)):
            raise StoreError(416, f"unsupported Range {rng!r}")
        if m.group(1):
            start = int(m.group(1))
            end = min(int(m.group(2)), entry.size - 1) if m.group(2) else entry.size - 1
        else:  # suffix range: the last N bytes
            start = max(0, entry.size - int(m.group(2)))
        if start >= entry.size or start > end:
            h.send_response(416)
            h.send_header("Content-Range", f"bytes */{entry.size}")
            h.send_header("Content-Length", "0")
            h.end_headers()
            return
        status = 206
        headers["Content-Range"] = f"bytes {start}-{end}/{entry.size}"
    length = max(0, end - start + 1)
    h.send_response(status)
    for k, v in headers.items():
        h.send_header(k, v)
    h.send_header("Content-Length", str(length))
    h.end_headers()
    if h.command == "HEAD":
        return
    with open(h.store.blob_path(repo_type, repo_id, entry.oid), "rb") as fh:
        fh.seek(start)
        left = length
        while left:
            block = fh.read(min(left, 1 << 20))
            if not block:
                break
            h.wfile.write(block)
            left -= len(block)
