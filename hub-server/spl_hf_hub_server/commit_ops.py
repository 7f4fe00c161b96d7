"""Validation of an NDJSON commit payload before anything is stored.

Every line must be a JSON object ``{"key": ..., "value": {...}}``; the first is the header (a
non-empty string ``summary``, optional string ``description`` and 40-hex ``parentCommit``), the
others are ``file``, ``lfsFile``, ``deletedFile`` or ``deletedFolder`` operations with the keys and
types the Hub client sends. A path is refused (422), never rewritten: no leading ``/``, no empty,
``.`` or ``..`` segment, no backslash or control character, and no segment the Hub client itself
refuses to commit (``.git``, ``.cache``): such a file would be written into a user's checkout by
``snapshot_download(local_dir=...)``. A malformed payload is a 400 naming the line, so a client bug
or a hostile client never reaches the store's code as a 500.

The body is split into lines on ``\n`` only (NDJSON): ``str.splitlines`` would also split inside a
JSON string holding U+2028 or another Unicode line break.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass

from huggingface_hub.utils import FORBIDDEN_FOLDERS

from spl_hf_hub_server.errors import StoreError

MAX_PATH = 1000  # bytes; longer paths are refused (the Hub's own limit is of this order)
MAX_SUMMARY = 1000  # characters of a commit title (the Hub's pages show one line)
MAX_DESCRIPTION = 64 * 1024  # characters of a commit description
_SHA = re.compile(r"^[0-9a-f]{40}$")
_OID = re.compile(r"^[0-9a-f]{64}$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
OPERATIONS = ("file", "lfsFile", "deletedFile", "deletedFolder")


@dataclass(frozen=True)
class Operation:
    key: str
    path: str
    content: bytes | None = None  # file
    oid: str | None = None  # lfsFile
    size: int | None = None  # lfsFile, when the client sent it


@dataclass(frozen=True)
class CommitPayload:
    summary: str
    description: str
    parent: str | None
    operations: list[Operation]


def forbidden(path: str) -> str | None:
    """The segment of ``path`` the Hub client refuses to commit (its ``FORBIDDEN_FOLDERS``), if any."""
    return next((s for s in path.split("/") if s in FORBIDDEN_FOLDERS), None)


def check_path(path: object, where: str, folder: bool = False) -> str:
    """``path`` when it is a valid repo path; 422 naming the rule it breaks otherwise."""
    if not isinstance(path, str):
        raise StoreError(400, f"{where}: 'path' must be a string, got {type(path).__name__}")
    p = path[:-1] if folder and path.endswith("/") else path  # a folder may be named with its slash
    problem = None
    if not p:
        problem = "it is empty"
    elif p.startswith("/"):
        problem = "it starts with '/'"
    elif "\\" in p:
        problem = "it holds a backslash"
    elif _CONTROL.search(p):
        problem = "it holds a control character"
    elif any(s in ("", ".", "..") for s in p.split("/")):
        problem = "it has an empty, '.' or '..' segment"
    elif len(p.encode("utf-8", "surrogatepass")) > MAX_PATH:
        problem = f"it is longer than {MAX_PATH} bytes"
    elif forbidden(p):
        problem = f"files under a '{forbidden(p)}/' folder are never stored (the Hub refuses them)"
    if problem:
        raise StoreError(422, f"{where}: invalid path {path!r}: {problem}")
    return p


def _object(line: bytes, n: int) -> dict:
    try:
        obj = json.loads(line)
    except (ValueError, RecursionError) as exc:  # RecursionError: deeply nested JSON
        raise StoreError(400, f"commit line {n}: not valid JSON ({type(exc).__name__})") from None
    if (
        not isinstance(obj, dict)
        or not isinstance(obj.get("key"), str)
        or not isinstance(obj.get("value"), dict)
    ):
        raise StoreError(400, f'commit line {n}: expected {{"key": string, "value": object}}')
    return obj


def _header(value: dict) -> tuple[str, str, str | None]:
    summary, description, parent = value.get("summary"), value.get("description"), value.get("parentCommit")
    if not isinstance(summary, str) or not summary.strip():
        raise StoreError(400, "commit header: 'summary' must be a non-empty string")
    if len(summary) > MAX_SUMMARY:
        raise StoreError(400, f"commit header: 'summary' is longer than {MAX_SUMMARY} characters")
    if description is not None and not isinstance(description, str):
        raise StoreError(400, "commit header: 'description' must be a string")
    if description is not None and len(description) > MAX_DESCRIPTION:
        raise StoreError(400, f"commit header: 'description' is longer than {MAX_DESCRIPTION} characters")
    if parent is not None and not (isinstance(parent, str) and _SHA.match(parent)):
        raise StoreError(400, "commit header: 'parentCommit' must be a 40-hex commit sha")
    return summary.strip(), description or "", parent


def _operation(key: str, value: dict, n: int) -> Operation:
    where = f"commit line {n} ({key})"
    if key == "file":
        path = check_path(value.get("path"), where)
        content, encoding = value.get("content"), value.get("encoding", "base64")
        if encoding != "base64" or not isinstance(content, str):
            raise StoreError(400, f"{where}: {path}: expected a base64 string 'content'")
        try:
            data = base64.b64decode(content, validate=True)
        except (binascii.Error, ValueError):
            raise StoreError(400, f"{where}: {path}: 'content' is not valid base64") from None
        return Operation(key, path, content=data)
    if key == "lfsFile":
        path = check_path(value.get("path"), where)
        oid, algo, size = value.get("oid"), value.get("algo", "sha256"), value.get("size")
        if algo != "sha256" or not (isinstance(oid, str) and _OID.match(oid)):
            raise StoreError(400, f"{where}: {path}: expected algo 'sha256' and a 64-hex 'oid'")
        if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 0):
            raise StoreError(400, f"{where}: {path}: 'size' must be a non-negative integer")
        return Operation(key, path, oid=oid, size=size)
    if key in ("deletedFile", "deletedFolder"):
        return Operation(key, check_path(value.get("path"), where, folder=key == "deletedFolder"))
    raise StoreError(
        400, f"commit line {n}: unsupported operation {key!r}; supported: {', '.join(OPERATIONS)}"
    )


def parse_commit(raw: bytes) -> CommitPayload:
    """The validated payload; raises StoreError (400/422) before anything is stored."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise StoreError(400, f"commit payload is not UTF-8 (byte {exc.start})") from None
    lines = [(n, line) for n, line in enumerate(text.split("\n"), 1) if line.strip()]
    if not lines:
        raise StoreError(400, "commit payload is empty")
    first = _object(lines[0][1].encode(), lines[0][0])
    if first["key"] != "header":
        raise StoreError(400, "commit payload must start with a header line")
    summary, description, parent = _header(first["value"])
    ops = []
    for n, line in lines[1:]:
        obj = _object(line.encode(), n)
        ops.append(_operation(obj["key"], obj["value"], n))
    return CommitPayload(summary, description, parent, ops)


def file_folder_conflicts(tree: dict, added: set[str]) -> list[str]:
    """Paths that would be both a file and a folder, among those this commit adds or implies."""
    folders = {p.rsplit("/", i)[0] for p in tree for i in range(1, p.count("/") + 1)}
    conflicts = {p for p in tree if p in folders}
    return sorted(p for p in conflicts if p in added or any(a.startswith(p + "/") for a in added))
