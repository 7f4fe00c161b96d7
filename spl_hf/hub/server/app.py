"""HTTP routes of the local Hub server: the subset of the Hub API that ``huggingface_hub`` and
``datasets`` use to create a repo, commit through the classic LFS path, and list and download files.

Responses follow the Hub's shapes and headers (``X-Error-Code``, ``ETag``, ``X-Repo-Commit``,
``X-Linked-Etag``/``X-Linked-Size``, ``Range``) so the unmodified clients take their usual paths.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import itertools
import json
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import BinaryIO
from urllib.parse import parse_qs, unquote, urlsplit

import yaml

from spl_hf.hub.server.auth import Auth
from spl_hf.hub.server.store import Commit, FileEntry, Store, StoreError, lfs_pointer, upload_mode

_T = r"(datasets|models|spaces)"
_R = r"([^/]+)/([^/]+)"
_PREFIX = r"/(?:(datasets|spaces)/)?"
ROUTES: list[tuple[str, re.Pattern, str]] = [
    (m, re.compile(p), h)
    for m, p, h in [
        ("POST", r"^/api/repos/create$", "create_repo"),
        ("POST", r"^/api/validate-yaml$", "validate_yaml"),
        ("GET", rf"^/api/{_T}/{_R}(?:/revision/([^/]+))?$", "repo_info"),
        ("GET", rf"^/api/{_T}/{_R}/tree/([^/]+)(?:/(.*))?$", "tree"),
        ("GET", rf"^/api/{_T}/{_R}/refs$", "refs"),
        ("GET", rf"^/api/{_T}/{_R}/commits/([^/]+)$", "commits"),
        ("POST", rf"^/api/{_T}/{_R}/paths-info/([^/]+)$", "paths_info"),
        ("POST", rf"^/api/{_T}/{_R}/preupload/([^/]+)$", "preupload"),
        ("POST", rf"^/api/{_T}/{_R}/commit/([^/]+)$", "commit"),
        ("POST", rf"^/api/{_T}/{_R}/branch/([^/]+)$", "create_branch"),
        ("GET", rf"^/api/{_T}/{_R}/xet-(?:read|write)-token/.*$", "no_xet"),
        ("POST", rf"^{_PREFIX}{_R}\.git/info/lfs/objects/batch$", "lfs_batch"),
        ("POST", rf"^{_PREFIX}{_R}\.git/info/lfs/objects/verify$", "lfs_verify"),
        ("PUT", rf"^/__lfs/{_T}/{_R}/([0-9a-f]{{64}})$", "lfs_upload"),
        ("GET", rf"^{_PREFIX}{_R}/resolve/([^/]+)/(.+)$", "resolve"),
        ("HEAD", rf"^{_PREFIX}{_R}/resolve/([^/]+)/(.+)$", "resolve"),
    ]
]
_RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")


def _iso(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _type(plural_or_prefix: str | None) -> str:
    return {"datasets": "dataset", "models": "model", "spaces": "space", None: "model"}[plural_or_prefix]


def _url_prefix(repo_type: str) -> str:
    return {"dataset": "datasets/", "space": "spaces/", "model": ""}[repo_type]


class HubHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: HubHTTPServer

    # -- plumbing ----------------------------------------------------------------------------
    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_HEAD(self) -> None:
        self._dispatch("HEAD")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def log_message(self, format: str, *args: object) -> None:
        # The request line only: never headers, so a token cannot reach the log.
        if self.server.verbose:
            sys.stderr.write(f"{self.address_string()} {format % args}\n")

    def _dispatch(self, method: str) -> None:
        url = urlsplit(self.path)
        self.query = parse_qs(url.query)
        self._body_read = False
        try:
            for m, pattern, handler in ROUTES:
                match = pattern.match(url.path)
                if m == method and match:
                    getattr(self, handler)(*match.groups())
                    break
            else:
                raise StoreError(404, f"no route for {method} {url.path}")
        except StoreError as exc:
            self._error(exc.status, str(exc), exc.code)
        except (ValueError, KeyError, json.JSONDecodeError) as exc:
            self._error(400, f"bad request: {exc}")
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except Exception as exc:  # a server bug: answer 500 rather than drop the connection
            self.close_connection = True
            self._error(500, f"internal error: {type(exc).__name__}: {exc}")

    def _error(self, status: int, message: str, code: str | None = None) -> None:
        headers = {"X-Error-Message": message}
        if code:
            headers["X-Error-Code"] = code
        has_body = int(self.headers.get("Content-Length") or 0) > 0 or "Transfer-Encoding" in self.headers
        if has_body and not self._body_read:
            # An unread request body would be taken for the next request: end this connection, and say so.
            self.close_connection = True
            headers["Connection"] = "close"
        self._json({"error": message}, status, headers)

    def _json(self, obj: object, status: int = 200, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v.encode("ascii", "replace").decode())
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _body_stream(self) -> tuple[BinaryIO, int | None]:
        self._body_read = True
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            return _Dechunk(self.rfile), None
        return self.rfile, int(self.headers.get("Content-Length") or 0)

    def _body(self) -> bytes:
        stream, length = self._body_stream()
        return stream.read() if length is None else stream.read(length)

    @property
    def base(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{self.headers.get('Host') or f'{host}:{port}'}"

    @property
    def store(self) -> Store:
        return self.server.store

    @property
    def auth(self) -> Auth:
        return self.server.auth

    def _repo(
        self, plural_or_prefix: str | None, org: str, name: str, *, write: bool = False
    ) -> tuple[str, str]:
        repo_type, repo_id = _type(plural_or_prefix), f"{unquote(org)}/{unquote(name)}"
        authz = self.headers.get("Authorization")
        if write:
            self.auth.check_write(authz)
        meta = self.store.meta(repo_type, repo_id)
        self.auth.check_read(authz, bool(meta and meta["private"]))
        if meta is None:
            raise StoreError(404, "Repository not found", "RepoNotFound")
        return repo_type, repo_id

    # -- repos -------------------------------------------------------------------------------
    def create_repo(self) -> None:
        body = json.loads(self._body() or b"{}")
        self.auth.check_write(self.headers.get("Authorization"))
        repo_type = body.get("type") or "model"
        repo_id = (
            f"{body['organization']}/{body['name']}" if body.get("organization") else str(body.get("name"))
        )
        private = body.get("visibility", "private" if body.get("private") else "public") != "public"
        url = f"{self.base}/{_url_prefix(repo_type)}{repo_id}"
        if not self.store.create(repo_type, repo_id, private):
            self._json(
                {"error": "You already created this dataset repo", "url": url},
                409,
                {"X-Error-Message": "You already created this repo"},
            )
            return
        self._json({"url": url, "name": repo_id, "id": repo_id}, 200)

    def repo_info(self, t: str, org: str, name: str, revision: str | None) -> None:
        repo_type, repo_id = self._repo(t, org, name)
        sha = self.store.resolve(repo_type, repo_id, unquote(revision or "main"))
        commit = self.store.commit(repo_type, repo_id, sha)
        meta = self.store.meta(repo_type, repo_id) or {}
        blobs = self.query.get("blobs", ["false"])[0].lower() in ("1", "true")
        siblings = []
        for p, e in sorted(commit.tree.items()):
            s: dict = {"rfilename": p}
            if blobs:
                s.update(size=e.size, blobId=e.blob_id)
                if e.lfs:
                    s["lfs"] = {
                        "sha256": e.oid,
                        "size": e.size,
                        "pointerSize": len(lfs_pointer(e.oid, e.size)),
                    }
            siblings.append(s)
        self._json(
            {
                "_id": hashlib.sha1(repo_id.encode()).hexdigest()[:24],
                "id": repo_id,
                "author": repo_id.split("/")[0],
                "sha": sha,
                "private": bool(meta.get("private")),
                "gated": False,
                "disabled": False,
                "downloads": 0,
                "likes": 0,
                "tags": [],
                "createdAt": _iso(meta.get("created", commit.date)),
                "lastModified": _iso(commit.date),
                "siblings": siblings,
            }
        )

    def refs(self, t: str, org: str, name: str) -> None:
        repo_type, repo_id = self._repo(t, org, name)
        heads = self.store.refs(repo_type, repo_id)["heads"]
        branches = [
            {"name": b, "ref": f"refs/heads/{b}", "targetCommit": s}
            for b, s in heads.items()
            if not b.startswith("refs/pr/")
        ]
        prs = [{"name": b, "ref": b, "targetCommit": s} for b, s in heads.items() if b.startswith("refs/pr/")]
        self._json({"branches": branches, "converts": [], "tags": [], "pullRequests": prs})

    def commits(self, t: str, org: str, name: str, revision: str) -> None:
        repo_type, repo_id = self._repo(t, org, name)
        sha = self.store.resolve(repo_type, repo_id, unquote(revision))
        self._json(
            [
                {
                    "id": c.sha,
                    "title": c.summary,
                    "message": c.description,
                    "authors": [],
                    "date": _iso(c.date),
                }
                for c in self.store.history(repo_type, repo_id, sha)
            ]
        )

    # -- listing -----------------------------------------------------------------------------
    def _entries(self, commit: Commit) -> tuple[dict[str, FileEntry], set[str]]:
        dirs = {"/".join(p.split("/")[:i]) for p in commit.tree for i in range(1, p.count("/") + 1)}
        return commit.tree, dirs

    def _file_info(self, e: FileEntry, last: dict | None) -> dict:
        d: dict = {"type": "file", "oid": e.blob_id, "size": e.size, "path": e.path}
        if e.lfs:
            d["lfs"] = {"oid": e.oid, "size": e.size, "pointerSize": len(lfs_pointer(e.oid, e.size))}
        if last is not None:
            d["lastCommit"] = last
        return d

    def _dir_info(self, tree: dict[str, FileEntry], path: str, last: dict | None) -> dict:
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

    def _last_commit(self, repo_type: str, repo_id: str, sha: str, path: str) -> dict:
        """The newest commit that changed ``path`` (a file, or anything under a folder)."""
        history = self.store.history(repo_type, repo_id, sha)

        def state(c: Commit) -> list:
            return [(p, e.oid) for p, e in sorted(c.tree.items()) if p == path or p.startswith(path + "/")]

        found = history[-1]
        for newer, older in itertools.pairwise(history):
            if state(newer) != state(older):
                found = newer
                break
        return {"id": found.sha, "title": found.summary, "date": _iso(found.date)}

    def tree(self, t: str, org: str, name: str, revision: str, path: str | None) -> None:
        repo_type, repo_id = self._repo(t, org, name)
        sha = self.store.resolve(repo_type, repo_id, unquote(revision))
        commit = self.store.commit(repo_type, repo_id, sha)
        files, dirs = self._entries(commit)
        root = unquote(path or "").strip("/")
        if root and root not in dirs:
            raise StoreError(404, f"{root} does not exist at {sha}", "EntryNotFound")
        recursive = self.query.get("recursive", ["false"])[0].lower() in ("1", "true")
        expand = self.query.get("expand", ["false"])[0].lower() in ("1", "true")
        prefix = root + "/" if root else ""

        def wanted(p: str) -> bool:
            return p.startswith(prefix) and (recursive or "/" not in p[len(prefix) :])

        def last(p: str) -> dict | None:
            return self._last_commit(repo_type, repo_id, sha, p) if expand else None

        out = [self._dir_info(files, d, last(d)) for d in sorted(dirs) if wanted(d)]
        out += [self._file_info(e, last(p)) for p, e in sorted(files.items()) if wanted(p)]
        self._json(out)

    def paths_info(self, t: str, org: str, name: str, revision: str) -> None:
        form = parse_qs(self._body().decode())
        repo_type, repo_id = self._repo(t, org, name)
        sha = self.store.resolve(repo_type, repo_id, unquote(revision))
        commit = self.store.commit(repo_type, repo_id, sha)
        files, dirs = self._entries(commit)
        expand = form.get("expand", ["false"])[0].lower() in ("1", "true")
        out = []
        for p in form.get("paths", []):
            p = p.strip("/")
            last = self._last_commit(repo_type, repo_id, sha, p) if expand else None
            if p in files:
                out.append(self._file_info(files[p], last))
            elif p in dirs:
                out.append(self._dir_info(files, p, last))
        self._json(out)

    # -- writing -----------------------------------------------------------------------------
    def validate_yaml(self) -> None:
        body = json.loads(self._body() or b"{}")
        content = str(body.get("content", ""))
        errors = []
        if content.startswith("---"):
            parts = content.split("---", 2)
            try:
                meta = yaml.safe_load(parts[1]) if len(parts) == 3 else None
                if len(parts) != 3:
                    errors.append("the YAML block at the top of README.md is not closed by '---'")
                elif meta is not None and not isinstance(meta, dict):
                    errors.append("the YAML block of README.md must be a mapping")
            except yaml.YAMLError as exc:
                errors.append(f"invalid YAML in README.md: {exc}")
        if errors:
            self._json({"errors": [{"message": m} for m in errors]}, 400)
        else:
            self._json({"warnings": []})

    def preupload(self, t: str, org: str, name: str, revision: str) -> None:
        body = json.loads(self._body() or b"{}")
        repo_type, repo_id = self._repo(t, org, name, write=True)
        sha = self.store.resolve(repo_type, repo_id, unquote(revision))
        tree = self.store.commit(repo_type, repo_id, sha).tree
        out = []
        for f in body.get("files", []):
            path, size = str(f["path"]), int(f["size"])
            mode = upload_mode(path, size, base64.b64decode(f.get("sample", "")))
            existing = tree.get(path)
            oid = None if existing is None else (existing.oid if existing.lfs else existing.blob_id)
            out.append({"path": path, "uploadMode": mode, "shouldIgnore": False, "oid": oid})
        self._json({"files": out, "commitOid": sha})

    def commit(self, t: str, org: str, name: str, revision: str) -> None:
        raw = self._body()
        repo_type, repo_id = self._repo(t, org, name, write=True)
        lines = [json.loads(line) for line in raw.decode().splitlines() if line.strip()]
        if not lines or lines[0].get("key") != "header":
            raise StoreError(400, "commit payload must start with a header line")
        create_pr = self.query.get("create_pr", ["0"])[0] in ("1", "true")
        sha, pr = self.store.apply_commit(
            repo_type, repo_id, unquote(revision), lines[0].get("value") or {}, lines[1:], create_pr
        )
        page = f"{self.base}/{_url_prefix(repo_type)}{repo_id}"
        out = {"commitUrl": f"{page}/commit/{sha}", "commitOid": sha, "success": True}
        if pr is not None:
            out["pullRequestUrl"] = f"{page}/discussions/{pr}"
        self._json(out)

    def create_branch(self, t: str, org: str, name: str, branch: str) -> None:
        body = json.loads(self._body() or b"{}")
        repo_type, repo_id = self._repo(t, org, name, write=True)
        start = self.store.resolve(repo_type, repo_id, str(body.get("startingPoint") or "main"))
        self.store.create_branch(repo_type, repo_id, unquote(branch), start)
        self._json({})

    def no_xet(self, t: str, org: str, name: str) -> None:
        self._repo(t, org, name)
        raise StoreError(
            501, "this server implements the classic LFS upload path only: set HF_HUB_DISABLE_XET=1"
        )

    def lfs_batch(self, prefix: str | None, org: str, name: str) -> None:
        body = json.loads(self._body() or b"{}")
        repo_type, repo_id = self._repo(prefix, org, name, write=body.get("operation") == "upload")
        objects = []
        for obj in body.get("objects", []):
            oid, size = str(obj["oid"]), int(obj["size"])
            entry: dict = {"oid": oid, "size": size}
            if body.get("operation") == "upload" and not self.store.has_blob(repo_type, repo_id, oid, size):
                sig = self.auth.sign(f"{repo_type}/{repo_id}/{oid}/{size}")
                upload = f"{self.base}/__lfs/{repo_type}s/{repo_id}/{oid}?size={size}&sig={sig}"
                verify = f"{self.base}/{_url_prefix(repo_type)}{repo_id}.git/info/lfs/objects/verify"
                entry["actions"] = {"upload": {"href": upload}, "verify": {"href": verify}}
            elif body.get("operation") != "upload":
                if not self.store.has_blob(repo_type, repo_id, oid, size):
                    entry["error"] = {"code": 404, "message": "Object does not exist"}
                else:
                    href = f"{self.base}/__lfs/{repo_type}s/{repo_id}/{oid}"
                    entry["actions"] = {"download": {"href": href}}
            objects.append(entry)
        self._json({"transfer": "basic", "objects": objects, "hash_algo": "sha256"})

    def lfs_upload(self, t: str, org: str, name: str, oid: str) -> None:
        repo_type, repo_id = _type(t), f"{unquote(org)}/{unquote(name)}"
        size = int(self.query.get("size", ["-1"])[0])
        self.auth.verify_signature(f"{repo_type}/{repo_id}/{oid}/{size}", self.query.get("sig", [""])[0])
        if self.store.meta(repo_type, repo_id) is None:
            raise StoreError(404, "Repository not found", "RepoNotFound")
        stream, length = self._body_stream()
        if length is not None and length != size:
            raise StoreError(400, f"upload of {oid} announced {size} bytes but sends {length}")
        self.store.put_blob(repo_type, repo_id, oid, size, stream)
        self._json({}, 200, {"ETag": f'"{oid}"'})

    def lfs_verify(self, prefix: str | None, org: str, name: str) -> None:
        body = json.loads(self._body() or b"{}")
        repo_type, repo_id = self._repo(prefix, org, name, write=True)
        if not self.store.has_blob(repo_type, repo_id, str(body["oid"]), int(body["size"])):
            raise StoreError(404, f"object {body['oid']} of size {body['size']} was not uploaded")
        self._json({"message": "verified"})

    # -- reading -----------------------------------------------------------------------------
    def resolve(self, prefix: str | None, org: str, name: str, revision: str, path: str) -> None:
        repo_type, repo_id = self._repo(prefix, org, name)
        sha = self.store.resolve(repo_type, repo_id, unquote(revision))
        entry = self.store.commit(repo_type, repo_id, sha).tree.get(unquote(path))
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
        rng = self.headers.get("Range")
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
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{entry.size}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            status = 206
            headers["Content-Range"] = f"bytes {start}-{end}/{entry.size}"
        length = max(0, end - start + 1)
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(length))
        self.end_headers()
        if self.command == "HEAD":
            return
        with open(self.store.blob_path(repo_type, repo_id, entry.oid), "rb") as fh:
            fh.seek(start)
            left = length
            while left:
                block = fh.read(min(left, 1 << 20))
                if not block:
                    break
                self.wfile.write(block)
                left -= len(block)


class _Dechunk:
    """Reader over an HTTP/1.1 chunked request body."""

    def __init__(self, raw: BinaryIO) -> None:
        self._raw, self._left, self._done = raw, 0, False

    def read(self, n: int = -1) -> bytes:
        out = bytearray()
        while not self._done and (n < 0 or len(out) < n):
            if self._left == 0:
                size_line = self._raw.readline().split(b";")[0].strip()
                self._left = int(size_line or b"0", 16)
                if self._left == 0:
                    while self._raw.readline().strip():  # trailers
                        pass
                    self._done = True
                    break
            want = self._left if n < 0 else min(self._left, n - len(out))
            block = self._raw.read(want)
            if not block:
                raise StoreError(400, "chunked body ended early")
            out += block
            self._left -= len(block)
            if self._left == 0:
                self._raw.readline()  # CRLF after the chunk
        return bytes(out)


class HubHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(
        self,
        root: str,
        host: str = "127.0.0.1",
        port: int = 0,
        token: str | None = None,
        verbose: bool = False,
    ) -> None:
        self.store = Store(root)
        self.auth = Auth(token)
        self.verbose = verbose
        super().__init__((host, port), HubHandler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"


class RunningServer:
    """A server on a background thread (tests, the demo); ``stop()`` shuts it down."""

    def __init__(self, root: str, host: str = "127.0.0.1", port: int = 0, token: str | None = None) -> None:
        self.httpd = HubHTTPServer(root, host, port, token)
        self.url = self.httpd.url
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="spl-hf-hub", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(timeout=10)

    def __enter__(self) -> RunningServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
