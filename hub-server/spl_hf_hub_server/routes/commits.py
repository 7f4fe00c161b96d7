"""Routes that write files: preupload, the NDJSON commit, and README metadata validation."""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING
from urllib.parse import unquote

from spl_hf.dataset.frontmatter import FrontMatterError, parse_front_matter
from spl_hf_hub_server.commit_ops import check_path, parse_commit
from spl_hf_hub_server.routes.common import url_prefix
from spl_hf_hub_server.store import upload_mode

if TYPE_CHECKING:
    from spl_hf_hub_server.routes.common import Request


def validate_yaml(h: Request) -> None:
    """The Hub's README check, through the same reader (and limits) a commit's README goes through."""
    body = h.json_body()
    try:
        parse_front_matter(str(body.get("content", "")), "README.md")
    except FrontMatterError as exc:
        h.json({"errors": [{"message": str(exc)}]}, 400)
        return
    h.json({"warnings": []})


def preupload(h: Request, t: str, org: str, name: str, revision: str) -> None:
    repo_type, repo_id = h.repo(t, org, name, write=True)
    body = h.json_body()
    sha = h.store.resolve(repo_type, repo_id, unquote(revision))
    tree = h.store.commit(repo_type, repo_id, sha).tree
    out = []
    for n, f in enumerate(body.get("files", [])):
        path, size = check_path(f["path"], f"preupload file {n}"), int(f["size"])
        mode = upload_mode(path, size, base64.b64decode(f.get("sample", "")))
        existing = tree.get(path)
        oid = None if existing is None else (existing.oid if existing.lfs else existing.blob_id)
        out.append({"path": path, "uploadMode": mode, "shouldIgnore": False, "oid": oid})
    h.json({"files": out, "commitOid": sha})


def commit(h: Request, t: str, org: str, name: str, revision: str) -> None:
    repo_type, repo_id = h.repo(t, org, name, write=True)
    payload = parse_commit(h.body())
    create_pr = h.flag("create_pr")
    sha, pr = h.store.apply_commit(repo_type, repo_id, unquote(revision), payload, create_pr)
    page = f"{h.base}/{url_prefix(repo_type)}{repo_id}"
    out = {"commitUrl": f"{page}/commit/{sha}", "commitOid": sha, "success": True}
    if pr is not None:
        out["pullRequestUrl"] = f"{page}/discussions/{pr}"
    h.json(out)
