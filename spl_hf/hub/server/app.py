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
from http.server import BaseHTTPRequestHandler
from typing import BinaryIO
from urllib.parse import parse_qs, unquote, urlsplit

import yaml

from spl_hf.hub.server.auth import Auth
from spl_hf.hub.server.commit_ops import parse_commit
from spl_hf.hub.server.config import HubServeConfig
from spl_hf.hub.server.errors import StoreError
from spl_hf.hub.server.http import (
    BoundedThreadingServer,
    LimitedReader,
    error_body,
    header_name,
    header_value,
)
from spl_hf.hub.server.store import Commit, FileEntry, Store, lfs_pointer, upload_mode

XET_HINT = "this server takes classic LFS uploads only, set HF_HUB_DISABLE_XET=1"
XET_MESSAGE = (
    "this server implements the classic LFS upload path only (no Xet storage): set HF_HUB_DISABLE_XET=1 "
    "in the uploading process"
)
MAX_CARD_BYTES = 1024 * 1024  # a README larger than this gets no cardData (parsed on every repo_info)
_ORG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")

_T = r"(datasets|models|spaces)"
_R = r"([^/]+)/([^/]+)"
_PREFIX = r"/(?:(datasets|spaces)/)?"
# Who may send a body to a route, checked BEFORE any of it is read: "write" needs the write token;
# "read" is checked by the handler against the repo named in the URL before it reads the body;
# "signed" carries an upload signature in its query. Body caps: "json", "commit", "upload", or None.
_ROUTE_TABLE = [
    ("GET", r"^/api/whoami-v2$", "whoami", "read", None),
    ("POST", r"^/api/repos/create$", "create_repo", "write", "json"),
    ("DELETE", r"^/api/repos/delete$", "delete_repo", "write", "json"),
    ("POST", r"^/api/validate-yaml$", "validate_yaml", "read", "json"),
    ("GET", rf"^/api/{_T}$", "list_repos", "read", None),
    ("GET", rf"^/api/{_T}/{_R}(?:/revision/([^/]+))?$", "repo_info", "read", None),
    ("HEAD", rf"^/api/{_T}/{_R}(?:/revision/([^/]+))?$", "repo_info", "read", None),
    ("PUT", rf"^/api/{_T}/{_R}/settings$", "repo_settings", "write", "json"),
    ("GET", rf"^/api/{_T}/{_R}/tree/([^/]+)(?:/(.*))?$", "tree", "read", None),
    ("GET", rf"^/api/{_T}/{_R}/refs$", "refs", "read", None),
    ("GET", rf"^/api/{_T}/{_R}/commits/([^/]+)$", "commits", "read", None),
    ("POST", rf"^/api/{_T}/{_R}/paths-info/([^/]+)$", "paths_info", "read", "json"),
    ("POST", rf"^/api/{_T}/{_R}/preupload/([^/]+)$", "preupload", "write", "json"),
    ("POST", rf"^/api/{_T}/{_R}/commit/([^/]+)$", "commit", "write", "commit"),
    ("POST", rf"^/api/{_T}/{_R}/branch/([^/]+)$", "create_branch", "write", "json"),
    ("DELETE", rf"^/api/{_T}/{_R}/branch/([^/]+)$", "delete_branch", "write", None),
    ("POST", rf"^/api/{_T}/{_R}/tag/([^/]+)$", "create_tag", "write", "json"),
    ("DELETE", rf"^/api/{_T}/{_R}/tag/([^/]+)$", "delete_tag", "write", None),
    ("GET", rf"^/api/{_T}/{_R}/xet-(?:read|write)-token/.*$", "no_xet", "read", None),
    ("GET", r"^/__xet-unsupported/.*$", "no_xet_here", "read", None),
    ("POST", rf"^{_PREFIX}{_R}\.git/info/lfs/objects/batch$", "lfs_batch", "read", "json"),
    ("POST", rf"^{_PREFIX}{_R}\.git/info/lfs/objects/verify$", "lfs_verify", "write", "json"),
    ("PUT", rf"^/__lfs/{_T}/{_R}/([0-9a-f]{{64}})$", "lfs_upload", "signed", "upload"),
    ("GET", rf"^{_PREFIX}{_R}/resolve/([^/]+)/(.+)$", "resolve", "read", None),
    ("HEAD", rf"^{_PREFIX}{_R}/resolve/([^/]+)/(.+)$", "resolve", "read", None),
]
ROUTES: list[tuple[str, re.Pattern, str, str, str | None]] = [
    (m, re.compile(p), h, a, cap) for m, p, h, a, cap in _ROUTE_TABLE
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
    def setup(self) -> None:
        self.timeout = self.server.config.idle_timeout_s  # every recv and send on this socket
        super().setup()

    def handle_one_request(self) -> None:
        self.server.expect_headers(self.connection)
        try:
            super().handle_one_request()
        finally:
            self.server.headers_received(self.connection)

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_HEAD(self) -> None:
        self._dispatch("HEAD")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    def do_PATCH(self) -> None:
        self._dispatch("PATCH")

    def do_OPTIONS(self) -> None:
        self._dispatch("OPTIONS")

    def log_message(self, format: str, *args: object) -> None:
        # The request line only: never headers, so a token cannot reach the log.
        if self.server.verbose:
            sys.stderr.write(f"{self.address_string()} {header_value(format % args)}\n")

    def send_header(self, keyword: str, value: str) -> None:
        """The one way a header is written: no request data can add a header or end the block."""
        super().send_header(header_name(keyword), header_value(value))

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Errors raised by the stock request parsing (bad request line, unknown method) in the Hub's
        JSON error shape instead of Python's HTML page."""
        self._body_read = False
        self.close_connection = True
        reason = self.responses.get(code, ("error",))[0]
        self._error(code, f"{reason}: {message}" if message else reason)

    def _dispatch(self, method: str) -> None:
        self.server.headers_received(self.connection)  # the header deadline is met
        url = urlsplit(self.path)
        self.query = parse_qs(url.query)
        self._body_read = False
        self._body_cap: str | None = None
        self._anonymous_limit: int | None = None
        try:
            handler, groups = self._route(method, url.path)
            getattr(self, handler)(*groups)
        except StoreError as exc:
            self._error(exc.status, str(exc), exc.code)
        except (ValueError, KeyError, TypeError, json.JSONDecodeError) as exc:
            self._error(400, f"bad request: {exc}")
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            self.close_connection = True  # the client went away or stalled: nothing to answer
        except Exception as exc:  # a server bug: answer 500 rather than drop the connection
            self.close_connection = True
            self._error(500, f"internal error: {type(exc).__name__}")

    def _route(self, method: str, path: str) -> tuple[str, tuple]:
        """The handler for this request, after the checks due before any body is read."""
        allowed = []
        for m, pattern, handler, access, cap in ROUTES:
            match = pattern.match(path)
            if not match:
                continue
            if m != method:
                allowed.append(m)
                continue
            self._body_cap = cap
            self._admit(access, cap)
            return handler, match.groups()
        if allowed:
            raise StoreError(
                405, f"{method} is not supported on this route (use {', '.join(sorted(set(allowed)))})"
            )
        raise StoreError(404, f"no route for {method} {path}: this server implements a subset of the Hub API")

    def _declared_length(self) -> int | None:
        """Content-Length (0 without one); None for a chunked body."""
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            return None
        raw = self.headers.get("Content-Length") or "0"
        if not raw.isdigit():
            raise StoreError(400, "invalid Content-Length")
        return int(raw)

    def _admit(self, access: str, cap: str | None) -> None:
        """Authenticate, then check the declared size, both before a byte of the body is read."""
        authz = self.headers.get("Authorization")
        authenticated = False
        if access == "write":
            self.auth.check_write(authz)
        elif access == "read":
            authenticated = self.auth.authenticated(authz)  # a wrong token is refused whatever the route
        length = self._declared_length()
        limit = self._limit(cap)
        if access == "read" and limit is not None and self.auth.enabled and not authenticated:
            # Public reads with a body (paths-info, LFS batch) stay open, with a small body.
            limit = self._anonymous_limit = min(limit, self.server.config.max_anonymous_body)
        if length and limit is None:
            raise StoreError(400, "this route takes no request body")
        if length is not None and limit is not None and length > limit:
            raise StoreError(413, f"request body of {length} bytes is larger than {limit}", "PayloadTooLarge")

    def _limit(self, cap: str | None) -> int | None:
        c = self.server.config
        return {
            None: None,
            "json": c.max_json_body,
            "commit": c.max_commit_body,
            "upload": c.max_upload_bytes,
        }[cap]

    def _error(self, status: int, message: str, code: str | None = None) -> None:
        data, headers = error_body(status, message, code)
        request_headers = getattr(self, "headers", None)
        has_body = request_headers is not None and (
            (request_headers.get("Content-Length") or "0") != "0" or "Transfer-Encoding" in request_headers
        )
        if has_body and not getattr(self, "_body_read", False):
            # An unread request body would be taken for the next request: end this connection, and say so.
            self.close_connection = True
            headers["Connection"] = "close"
        self._send(status, data, headers)

    def _json(self, obj: object, status: int = 200, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(obj).encode(), headers or {})

    def _send(self, status: int, data: bytes, headers: dict[str, str]) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _body_stream(self) -> tuple[BinaryIO, int | None]:
        """The body reader; ``_body_read`` is set only once all of it is read: an error before then
        ends the connection, since the rest of the body would be taken for the next request."""
        limit = self._anonymous_limit or self._limit(self._body_cap) or 0
        what = "request body"
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            return LimitedReader(_Dechunk(self.rfile), limit, what), None
        return LimitedReader(self.rfile, limit, what), self._declared_length()

    def _body(self) -> bytes:
        stream, length = self._body_stream()
        data = stream.read() if length is None else stream.read(length)
        if length is not None and len(data) < length:
            raise StoreError(400, f"request body ended after {len(data)} of {length} bytes")
        self._body_read = True
        return data

    def _json_body(self) -> dict:
        try:
            body = json.loads(self._body() or b"{}")
        except (ValueError, RecursionError) as exc:
            raise StoreError(400, f"request body is not valid JSON ({type(exc).__name__})") from None
        if not isinstance(body, dict):
            raise StoreError(400, "request body must be a JSON object")
        return body

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
        body = self._json_body()
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
                "cardData": card_data(self.store, repo_type, repo_id, commit),
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
        tags = [
            {"name": t, "ref": f"refs/tags/{t}", "targetCommit": v["sha"]}
            for t, v in sorted(self.store.refs(repo_type, repo_id).get("tags", {}).items())
        ]
        self._json({"branches": branches, "converts": [], "tags": tags, "pullRequests": prs})

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
        repo_type, repo_id = self._repo(t, org, name)  # before the body: a private repo reads nothing
        form = parse_qs(self._body().decode("utf-8", "replace"))
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
        body = self._json_body()
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
        repo_type, repo_id = self._repo(t, org, name, write=True)
        body = self._json_body()
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
        repo_type, repo_id = self._repo(t, org, name, write=True)
        payload = parse_commit(self._body())
        create_pr = self.query.get("create_pr", ["0"])[0] in ("1", "true")
        sha, pr = self.store.apply_commit(repo_type, repo_id, unquote(revision), payload, create_pr)
        page = f"{self.base}/{_url_prefix(repo_type)}{repo_id}"
        out = {"commitUrl": f"{page}/commit/{sha}", "commitOid": sha, "success": True}
        if pr is not None:
            out["pullRequestUrl"] = f"{page}/discussions/{pr}"
        self._json(out)

    def create_branch(self, t: str, org: str, name: str, branch: str) -> None:
        repo_type, repo_id = self._repo(t, org, name, write=True)
        body = self._json_body()
        start = self.store.resolve(repo_type, repo_id, str(body.get("startingPoint") or "main"))
        self.store.create_branch(repo_type, repo_id, unquote(branch), start)
        self._json({})

    def no_xet(self, t: str, org: str, name: str) -> None:
        """hf_xet asks for a Xet token and shows only the status and the final URL of a failure, never
        a body or header: so the answer redirects to a URL that reads as the instruction, and that
        URL fails. The Python client (``hf_raise_for_status``) shows the ``X-Error-Message`` too."""
        self._repo(t, org, name)
        location = f"{self.base}/__xet-unsupported/{XET_HINT.replace(' ', '-')}"
        self._send(307, b"", {"Location": location, "X-Error-Message": XET_MESSAGE})

    def no_xet_here(self) -> None:
        raise StoreError(501, XET_MESSAGE)

    # -- the calls users reach for first -----------------------------------------------------
    def whoami(self) -> None:
        authz = self.headers.get("Authorization")
        if not self.auth.authenticated(authz):
            raise StoreError(401, "Invalid user token: send the server's token (HF_TOKEN)")
        self._json(
            {
                "type": "user",
                "id": "local",
                "name": "local",
                "fullname": "spl-hf local Hub user",
                "isPro": False,
                "orgs": [],
                "auth": {"type": "access_token", "accessToken": {"displayName": "local", "role": "write"}},
            }
        )

    def list_repos(self, t: str) -> None:
        repo_type = _type(t)
        author = self.query.get("author", [None])[0]
        search = (self.query.get("search", [""])[0] or "").lower()
        limit = int(self.query.get("limit", ["1000"])[0])
        if author is not None and not _ORG.match(author):
            raise StoreError(400, f"invalid author {author!r}")
        authed = self.auth.authenticated(self.headers.get("Authorization")) or not self.auth.enabled
        out = []
        for repo_id in self.store.list_repos(repo_type, author):
            meta = self.store.meta(repo_type, repo_id) or {}
            if (meta.get("private") and not authed) or search not in repo_id.lower():
                continue
            out.append(
                {
                    "_id": hashlib.sha1(repo_id.encode()).hexdigest()[:24],
                    "id": repo_id,
                    "author": repo_id.split("/")[0],
                    "private": bool(meta.get("private")),
                    "sha": self.store.resolve(repo_type, repo_id, "main"),
                    "createdAt": _iso(meta.get("created", 0.0)),
                    "downloads": 0,
                    "likes": 0,
                    "tags": [],
                }
            )
        self._json(out[: max(0, limit)])

    def delete_repo(self) -> None:
        body = self._json_body()
        repo_type = body.get("type") or "model"
        org, name = body.get("organization"), body.get("name")
        repo_id = f"{org}/{name}" if org else str(name)
        self.store.delete_repo(str(repo_type), repo_id)
        self._json({})

    def repo_settings(self, t: str, org: str, name: str) -> None:
        repo_type, repo_id = self._repo(t, org, name, write=True)
        body = self._json_body()
        if body.get("gated") not in (None, False):
            raise StoreError(422, "gated access is not supported by this server")
        visibility = body.get("visibility")
        if visibility is None and isinstance(body.get("private"), bool):
            visibility = "private" if body["private"] else "public"
        if visibility is not None:
            if visibility not in ("private", "public"):
                raise StoreError(400, f"visibility must be 'private' or 'public', got {visibility!r}")
            self.store.set_private(repo_type, repo_id, visibility == "private")
        meta = self.store.meta(repo_type, repo_id) or {}
        self._json({"private": bool(meta.get("private"))})

    def delete_branch(self, t: str, org: str, name: str, branch: str) -> None:
        repo_type, repo_id = self._repo(t, org, name, write=True)
        self.store.delete_branch(repo_type, repo_id, unquote(branch))
        self._json({})

    def create_tag(self, t: str, org: str, name: str, revision: str) -> None:
        repo_type, repo_id = self._repo(t, org, name, write=True)
        body = self._json_body()
        tag, message = body.get("tag"), body.get("message") or ""
        if not isinstance(tag, str) or not isinstance(message, str):
            raise StoreError(400, "expected a string 'tag' (and an optional string 'message')")
        self.store.create_tag(repo_type, repo_id, tag, unquote(revision), message)
        self._json({})

    def delete_tag(self, t: str, org: str, name: str, tag: str) -> None:
        repo_type, repo_id = self._repo(t, org, name, write=True)
        self.store.delete_tag(repo_type, repo_id, unquote(tag))
        self._json({})

    def lfs_batch(self, prefix: str | None, org: str, name: str) -> None:
        self._repo(prefix, org, name)  # before the body: a private repo reads nothing
        body = self._json_body()
        repo_type, repo_id = self._repo(prefix, org, name, write=body.get("operation") == "upload")
        objects = []
        for obj in body.get("objects", []):
            oid, size = str(obj["oid"]), int(obj["size"])
            if size < 0 or size > self.server.config.max_upload_bytes:
                raise StoreError(
                    413,
                    f"object {oid} of {size} bytes: the largest accepted is {self.server.config.max_upload_bytes}",
                )
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
        length = self._declared_length()
        if length is not None and length != size:
            raise StoreError(400, f"upload of {oid} announced {size} bytes but sends {length}")
        stream, _ = self._body_stream()
        self.store.put_blob(repo_type, repo_id, oid, size, stream)
        self._body_read = True
        self._json({}, 200, {"ETag": f'"{oid}"'})

    def lfs_verify(self, prefix: str | None, org: str, name: str) -> None:
        repo_type, repo_id = self._repo(prefix, org, name, write=True)
        body = self._json_body()
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


class HubHTTPServer(BoundedThreadingServer):
    """The server: its store, its token check and its limits (:class:`HubServeConfig`)."""

    def __init__(self, config: HubServeConfig, token: str | None = None) -> None:
        self.config = config
        self.store = Store(config.root)
        self.auth = Auth(token)
        self.verbose = config.verbose
        self.store.sweep_partial_uploads()  # left by a killed server or upload
        super().__init__(
            (config.host, config.port), HubHandler, config.max_connections, config.header_timeout_s
        )
        self._sweeper = threading.Thread(target=self._sweep, name="spl-hf-hub-sweep", daemon=True)
        self._stopped = threading.Event()
        self._sweeper.start()

    def _sweep(self) -> None:
        while not self._stopped.wait(self.config.tmp_sweep_interval_s):
            try:
                self.store.sweep_partial_uploads()
            except OSError as exc:  # a vanished repo mid-sweep: the next sweep sees the new state
                sys.stderr.write(f"sweep of partial uploads failed: {exc}\n")

    def server_close(self) -> None:
        self._stopped.set()
        super().server_close()

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"


class RunningServer:
    """A server on a background thread (tests, the demo); ``stop()`` shuts it down.

    ``settings`` are further :class:`HubServeConfig` fields (limits, timeouts).
    """

    def __init__(
        self, root: str, host: str = "127.0.0.1", port: int = 0, token: str | None = None, **settings: object
    ) -> None:
        self.httpd = HubHTTPServer(HubServeConfig(root=root, host=host, port=port, **settings), token)
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


def card_data(store: Store, repo_type: str, repo_id: str, commit: Commit) -> dict | None:
    """README.md's YAML front matter (``yaml.safe_load``), as the Hub's ``cardData``; None without
    one. A block holding YAML aliases is not expanded (a few aliases can stand for gigabytes)."""
    entry = commit.tree.get("README.md")
    if entry is None or entry.size > MAX_CARD_BYTES:
        return None
    text = store.blob_path(repo_type, repo_id, entry.oid).read_bytes().decode("utf-8", "replace")
    if not text.startswith("---"):
        return None
    parts = text.split("---", 2)
    if len(parts) != 3:
        return None
    try:
        if any(isinstance(e, yaml.AliasEvent) for e in yaml.parse(parts[1])):
            return None
        meta = yaml.safe_load(parts[1])
    except yaml.YAMLError:
        return None
    if not isinstance(meta, dict):
        return None
    return json.loads(json.dumps(meta, default=str))  # dates and the like as the strings JSON has
