"""Routes of branches, tags and history."""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import unquote

from spl_hf_hub_server.errors import StoreError
from spl_hf_hub_server.routes.common import iso

if TYPE_CHECKING:
    from spl_hf_hub_server.routes.common import Request


def refs(h: Request, t: str, org: str, name: str) -> None:
    repo_type, repo_id = h.repo(t, org, name)
    heads = h.store.refs(repo_type, repo_id)["heads"]
    branches = [
        {"name": b, "ref": f"refs/heads/{b}", "targetCommit": s}
        for b, s in heads.items()
        if not b.startswith("refs/pr/")
    ]
    prs = [{"name": b, "ref": b, "targetCommit": s} for b, s in heads.items() if b.startswith("refs/pr/")]
    tags = [
        {"name": t, "ref": f"refs/tags/{t}", "targetCommit": v["sha"]}
        for t, v in sorted(h.store.refs(repo_type, repo_id).get("tags", {}).items())
    ]
    h.json({"branches": branches, "converts": [], "tags": tags, "pullRequests": prs})


def commits(h: Request, t: str, org: str, name: str, revision: str) -> None:
    repo_type, repo_id = h.repo(t, org, name)
    sha = h.store.resolve(repo_type, repo_id, unquote(revision))
    h.json(
        [
            {
                "id": c.sha,
                "title": c.summary,
                "message": c.description,
                "authors": [],
                "date": iso(c.date),
            }
            for c in h.store.history(repo_type, repo_id, sha)
        ]
    )


def create_branch(h: Request, t: str, org: str, name: str, branch: str) -> None:
    repo_type, repo_id = h.repo(t, org, name, write=True)
    body = h.json_body()
    start = h.store.resolve(repo_type, repo_id, str(body.get("startingPoint") or "main"))
    h.store.create_branch(repo_type, repo_id, unquote(branch), start)
    h.json({})


def delete_branch(h: Request, t: str, org: str, name: str, branch: str) -> None:
    repo_type, repo_id = h.repo(t, org, name, write=True)
    h.store.delete_branch(repo_type, repo_id, unquote(branch))
    h.json({})


def create_tag(h: Request, t: str, org: str, name: str, revision: str) -> None:
    repo_type, repo_id = h.repo(t, org, name, write=True)
    body = h.json_body()
    tag, message = body.get("tag"), body.get("message") or ""
    if not isinstance(tag, str) or not isinstance(message, str):
        raise StoreError(400, "expected a string 'tag' (and an optional string 'message')")
    h.store.create_tag(repo_type, repo_id, tag, unquote(revision), message)
    h.json({})


def delete_tag(h: Request, t: str, org: str, name: str, tag: str) -> None:
    repo_type, repo_id = h.repo(t, org, name, write=True)
    h.store.delete_tag(repo_type, repo_id, unquote(tag))
    h.json({})
