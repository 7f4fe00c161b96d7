"""Small helpers the route families share: repo types and URL prefixes, and the Hub's timestamps."""

from __future__ import annotations

import datetime as dt
import hashlib
from typing import TYPE_CHECKING, Any, BinaryIO, Protocol

if TYPE_CHECKING:
    from spl_hf_hub_server.auth import Auth
    from spl_hf_hub_server.store import Store


class Request(Protocol):
    """A request as the routes see it: what the handler (:class:`spl_hf_hub_server.handler.HubHandler`)
    offers them. Routes are typed against this, so the handler imports the routes and not the reverse."""

    command: str
    headers: Any  # email.message.Message
    query: dict[str, list[str]]
    server: Any
    wfile: BinaryIO

    @property
    def store(self) -> Store: ...

    @property
    def auth(self) -> Auth: ...

    @property
    def base(self) -> str: ...

    def repo(
        self, plural_or_prefix: str | None, org: str, name: str, *, write: bool = False
    ) -> tuple[str, str]: ...

    def json(self, obj: object, status: int = 200, headers: dict[str, str] | None = None) -> None: ...

    def send(self, status: int, data: bytes, headers: dict[str, str]) -> None: ...

    def body(self) -> bytes: ...

    def json_body(self) -> dict: ...

    def body_stream(self) -> tuple[BinaryIO, int | None]: ...

    def body_done(self) -> None: ...

    def flag(self, name: str, default: str = "false") -> bool: ...

    def declared_length(self) -> int | None: ...

    def send_response(self, code: int, message: str | None = None) -> None: ...

    def send_header(self, keyword: str, value: str) -> None: ...

    def end_headers(self) -> None: ...


def repo_type_of(plural_or_prefix: str | None) -> str:
    return {"datasets": "dataset", "models": "model", "spaces": "space", None: "model"}[plural_or_prefix]


def url_prefix(repo_type: str) -> str:
    return {"dataset": "datasets/", "space": "spaces/", "model": ""}[repo_type]


def iso(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def object_id(repo_id: str) -> str:
    """The Hub's 24-hex ``_id`` of a repo (stable per id here)."""
    return hashlib.sha1(repo_id.encode()).hexdigest()[:24]
