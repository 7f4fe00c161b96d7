"""Routes of repositories: create, delete, info, list, settings, and who the caller is."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING
from urllib.parse import unquote

from spl_hf_hub_server.errors import StoreError
from spl_hf_hub_server.routes.common import iso, object_id, repo_type_of, url_prefix
from spl_hf_hub_server.store import lfs_pointer

if TYPE_CHECKING:
    from spl_hf_hub_server.routes.common import Request

_ORG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")


def create_repo(h: Request) -> None:
    body = h.json_body()
    repo_type = body.get("type") or "model"
    repo_id = f"{body['organization']}/{body['name']}" if body.get("organization") else str(body.get("name"))
    private = body.get("visibility", "private" if body.get("private") else "public") != "public"
    url = f"{h.base}/{url_prefix(repo_type)}{repo_id}"
    if not h.store.create(repo_type, repo_id, private):
        h.json(
            {"error": "You already created this dataset repo", "url": url},
            409,
            {"X-Error-Message": "You already created this repo"},
        )
        return
    h.json({"url": url, "name": repo_id, "id": repo_id}, 200)


def delete_repo(h: Request) -> None:
    """A missing repo (or one of another type) is the Hub's 404, which ``missing_ok=True`` expects."""
    body = h.json_body()
    repo_type = body.get("type") or "model"
    org, name = body.get("organization"), body.get("name")
    repo_id = f"{org}/{name}" if org else str(name)
    h.store.delete_repo(str(repo_type), repo_id)
    h.json({})


def repo_info(h: Request, t: str, org: str, name: str, revision: str | None) -> None:
    repo_type, repo_id = h.repo(t, org, name)
    sha = h.store.resolve(repo_type, repo_id, unquote(revision or "main"))
    commit = h.store.commit(repo_type, repo_id, sha)
    meta = h.store.meta(repo_type, repo_id) or {}
    blobs = h.flag("blobs")
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
    h.json(
        {
            "_id": object_id(repo_id),
            "id": repo_id,
            "author": repo_id.split("/")[0],
            "sha": sha,
            "private": bool(meta.get("private")),
            "gated": False,
            "disabled": False,
            "downloads": 0,
            "likes": 0,
            "tags": [],
            "cardData": h.store.card(repo_type, repo_id, commit),  # recorded with the commit
            "createdAt": iso(meta.get("created", commit.date)),
            "lastModified": iso(commit.date),
            "siblings": siblings,
        }
    )


def list_repos(h: Request, t: str) -> None:
    repo_type = repo_type_of(t)
    author = h.query.get("author", [None])[0]
    search = (h.query.get("search", [""])[0] or "").lower()
    limit = int(h.query.get("limit", ["1000"])[0])
    if author is not None and not _ORG.match(author):
        raise StoreError(400, f"invalid author {author!r}")
    authed = h.auth.authenticated(h.headers.get("Authorization")) or not h.auth.enabled
    out = []
    for repo_id in h.store.list_repos(repo_type, author):
        meta = h.store.meta(repo_type, repo_id) or {}
        if (meta.get("private") and not authed) or search not in repo_id.lower():
            continue
        out.append(
            {
                "_id": object_id(repo_id),
                "id": repo_id,
                "author": repo_id.split("/")[0],
                "private": bool(meta.get("private")),
                "sha": h.store.resolve(repo_type, repo_id, "main"),
                "createdAt": iso(meta.get("created", 0.0)),
                "downloads": 0,
                "likes": 0,
                "tags": [],
            }
        )
    h.json(out[: max(0, limit)])


def repo_settings(h: Request, t: str, org: str, name: str) -> None:
    repo_type, repo_id = h.repo(t, org, name, write=True)
    body = h.json_body()
    if body.get("gated") not in (None, False):
        raise StoreError(422, "gated access is not supported by this server")
    visibility = body.get("visibility")
    if visibility is None and isinstance(body.get("private"), bool):
        visibility = "private" if body["private"] else "public"
    if visibility is not None:
        if visibility not in ("private", "public"):
            raise StoreError(400, f"visibility must be 'private' or 'public', got {visibility!r}")
        h.store.set_private(repo_type, repo_id, visibility == "private")
    meta = h.store.meta(repo_type, repo_id) or {}
    h.json({"private": bool(meta.get("private"))})


def whoami(h: Request) -> None:
    authz = h.headers.get("Authorization")
    if not h.auth.authenticated(authz):
        raise StoreError(401, "Invalid user token: send the server's token (HF_TOKEN)")
    h.json(
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
