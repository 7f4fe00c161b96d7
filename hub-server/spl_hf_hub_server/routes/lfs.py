"""Routes of the classic Git LFS transfer (batch, upload, verify) and the Xet refusal."""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import unquote

from spl_hf_hub_server.errors import StoreError
from spl_hf_hub_server.routes.common import repo_type_of, url_prefix

if TYPE_CHECKING:
    from spl_hf_hub_server.routes.common import Request

XET_HINT = "this server takes classic LFS uploads only, set HF_HUB_DISABLE_XET=1"
XET_MESSAGE = (
    "this server implements the classic LFS upload path only (no Xet storage): set HF_HUB_DISABLE_XET=1 "
    "in the uploading process"
)


def lfs_batch(h: Request, prefix: str | None, org: str, name: str) -> None:
    h.repo(prefix, org, name)  # before the body: a private repo reads nothing
    body = h.json_body()
    repo_type, repo_id = h.repo(prefix, org, name, write=body.get("operation") == "upload")
    objects = []
    for obj in body.get("objects", []):
        oid, size = str(obj["oid"]), int(obj["size"])
        if size < 0 or size > h.server.config.max_upload_bytes:
            raise StoreError(
                413,
                f"object {oid} of {size} bytes: the largest accepted is {h.server.config.max_upload_bytes}",
            )
        entry: dict = {"oid": oid, "size": size}
        if body.get("operation") == "upload" and not h.store.has_blob(repo_type, repo_id, oid, size):
            sig = h.auth.sign(f"{repo_type}/{repo_id}/{oid}/{size}")
            upload = f"{h.base}/__lfs/{repo_type}s/{repo_id}/{oid}?size={size}&sig={sig}"
            verify = f"{h.base}/{url_prefix(repo_type)}{repo_id}.git/info/lfs/objects/verify"
            entry["actions"] = {"upload": {"href": upload}, "verify": {"href": verify}}
        elif body.get("operation") != "upload":
            if not h.store.has_blob(repo_type, repo_id, oid, size):
                entry["error"] = {"code": 404, "message": "Object does not exist"}
            else:
                href = f"{h.base}/__lfs/{repo_type}s/{repo_id}/{oid}"
                entry["actions"] = {"download": {"href": href}}
        objects.append(entry)
    h.json({"transfer": "basic", "objects": objects, "hash_algo": "sha256"})


def lfs_upload(h: Request, t: str, org: str, name: str, oid: str) -> None:
    repo_type, repo_id = repo_type_of(t), f"{unquote(org)}/{unquote(name)}"
    size = int(h.query.get("size", ["-1"])[0])
    h.auth.verify_signature(f"{repo_type}/{repo_id}/{oid}/{size}", h.query.get("sig", [""])[0])
    if h.store.meta(repo_type, repo_id) is None:
        raise StoreError(404, "Repository not found", "RepoNotFound")
    length = h.declared_length()
    if length is not None and length != size:
        raise StoreError(400, f"upload of {oid} announced {size} bytes but sends {length}")
    stream, _ = h.body_stream()
    h.store.put_blob(repo_type, repo_id, oid, size, stream)
    h.body_done()
    h.json({}, 200, {"ETag": f'"{oid}"'})


def lfs_verify(h: Request, prefix: str | None, org: str, name: str) -> None:
    repo_type, repo_id = h.repo(prefix, org, name, write=True)
    body = h.json_body()
    if not h.store.has_blob(repo_type, repo_id, str(body["oid"]), int(body["size"])):
        raise StoreError(404, f"object {body['oid']} of size {body['size']} was not uploaded")
    h.json({"message": "verified"})


def no_xet(h: Request, t: str, org: str, name: str) -> None:
    """hf_xet asks for a Xet token and shows only the status and the final URL of a failure, never
    a body or header: so the answer redirects to a URL that reads as the instruction, and that
    URL fails. The Python client (``hf_raise_for_status``) shows the ``X-Error-Message`` too."""
    h.repo(t, org, name)
    location = f"{h.base}/__xet-unsupported/{XET_HINT.replace(' ', '-')}"
    h.send(307, b"", {"Location": location, "X-Error-Message": XET_MESSAGE})


def no_xet_here(h: Request) -> None:
    raise StoreError(501, XET_MESSAGE)
