"""The request handler of the local Hub server: a thin dispatcher over the route families.

It authenticates and checks a request's declared size before a byte of its body is read, hands the
request to the route's function (``spl_hf_hub_server.routes``), and answers every failure in the
Hub's JSON error shape (``X-Error-Code``/``X-Error-Message``), so the unmodified clients map it.
"""

from __future__ import annotations

import json
import re
import sys
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any, BinaryIO, Protocol
from urllib.parse import parse_qs, unquote, urlsplit

from spl_hf_hub_server.auth import Auth
from spl_hf_hub_server.errors import StoreError
from spl_hf_hub_server.http import Dechunk, LimitedReader, error_body, header_name, header_value, redact
from spl_hf_hub_server.routes import ROUTES
from spl_hf_hub_server.routes.common import repo_type_of
from spl_hf_hub_server.store import Store

if TYPE_CHECKING:
    import socket

    from spl_hf.hub import HubServeConfig


class Served(Protocol):
    """What the handler reads of its server (:class:`spl_hf_hub_server.app.HubHTTPServer`): typed here,
    so the handler never imports the app, which imports it."""

    config: HubServeConfig
    store: Store
    auth: Auth
    verbose: bool
    server_address: tuple[Any, ...]

    def expect_headers(self, conn: socket.socket) -> None: ...

    def headers_received(self, conn: socket.socket) -> None: ...


_HOST = re.compile(r"^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})|\[[0-9A-Fa-f:.]{2,45}\])(?::(\d{1,5}))?$")
_WILDCARD = ("0.0.0.0", "::", "")


class HubHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Served  # type: ignore[assignment]  # the HubHTTPServer, by what the handler reads of it

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
        # The request line only, with its query values redacted (a ``?token=``): never headers.
        if self.server.verbose:
            sys.stderr.write(f"{self.address_string()} {header_value(redact(format % args))}\n")

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
            route, groups = self._route(method, url.path)
            route(self, *groups)
        except StoreError as exc:
            self._error(exc.status, str(exc), exc.code)
        except (ValueError, KeyError, TypeError, json.JSONDecodeError) as exc:
            self._error(400, f"bad request: {exc}")
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            self.close_connection = True  # the client went away or stalled: nothing to answer
        except Exception as exc:  # a server bug: answer 500 rather than drop the connection
            self.close_connection = True
            self._error(500, f"internal error: {type(exc).__name__}")

    def _route(self, method: str, path: str) -> tuple:
        """The route function for this request, after the checks due before any body is read."""
        allowed = []
        for m, pattern, route, access, cap in ROUTES:
            match = pattern.match(path)
            if not match:
                continue
            if m != method:
                allowed.append(m)
                continue
            self._body_cap = cap
            self._admit(access, cap)
            return route, match.groups()
        if allowed:
            raise StoreError(
                405, f"{method} is not supported on this route (use {', '.join(sorted(set(allowed)))})"
            )
        raise StoreError(404, f"no route for {method} {path}: this server implements a subset of the Hub API")

    def declared_length(self) -> int | None:
        """Content-Length (0 without one); None for a chunked body. Two different lengths are a 400:
        a proxy in front could take the other one and see a different request."""
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            return None
        values = {v.strip() for v in self.headers.get_all("Content-Length") or []}
        if len(values) > 1:
            raise StoreError(400, f"conflicting Content-Length headers: {sorted(values)}")
        raw = values.pop() if values else "0"
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
        length = self.declared_length()
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
        self.send(status, data, headers)

    # -- what the routes use -----------------------------------------------------------------
    def json(self, obj: object, status: int = 200, headers: dict[str, str] | None = None) -> None:
        self.send(status, json.dumps(obj).encode(), headers or {})

    def send(self, status: int, data: bytes, headers: dict[str, str]) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def body_stream(self) -> tuple[BinaryIO, int | None]:
        """The body reader; ``body_read`` must be set only once all of it is read: an error before
        then ends the connection, since the rest of the body would be taken for the next request."""
        limit = self._anonymous_limit or self._limit(self._body_cap) or 0
        what = "request body"
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            return LimitedReader(Dechunk(self.rfile), limit, what), None
        return LimitedReader(self.rfile, limit, what), self.declared_length()

    def body_done(self) -> None:
        self._body_read = True

    def body(self) -> bytes:
        stream, length = self.body_stream()
        data = stream.read() if length is None else stream.read(length)
        if length is not None and len(data) < length:
            raise StoreError(400, f"request body ended after {len(data)} of {length} bytes")
        self.body_done()
        return data

    def json_body(self) -> dict:
        try:
            body = json.loads(self.body() or b"{}")
        except (ValueError, RecursionError) as exc:
            raise StoreError(400, f"request body is not valid JSON ({type(exc).__name__})") from None
        if not isinstance(body, dict):
            raise StoreError(400, "request body must be a JSON object")
        return body

    def flag(self, name: str, default: str = "false") -> bool:
        return self.query.get(name, [default])[0].lower() in ("1", "true")

    @property
    def base(self) -> str:
        """This server's URL as clients reach it, for the links it hands out (LFS hrefs, commit URLs).

        A server bound to one address names that address, whatever ``Host`` says; one bound to every
        interface takes the host from ``Host`` only when it is a plain host name or IP literal with
        the server's own port, so a forged header cannot send an upload elsewhere."""
        host, port = self.server.server_address[:2]
        if host not in _WILDCARD:
            return f"http://{f'[{host}]' if ':' in host else host}:{port}"
        m = _HOST.match(self.headers.get("Host") or "")
        if not m or int(m.group(1) or 80) != port:
            raise StoreError(400, f"Host header must name this server (port {port})")
        return f"http://{self.headers['Host']}"

    @property
    def store(self) -> Store:
        return self.server.store

    @property
    def auth(self) -> Auth:
        return self.server.auth

    def repo(
        self, plural_or_prefix: str | None, org: str, name: str, *, write: bool = False
    ) -> tuple[str, str]:
        """(repo type, repo id) of an existing repo the caller may read (and write, if asked)."""
        repo_type, repo_id = repo_type_of(plural_or_prefix), f"{unquote(org)}/{unquote(name)}"
        authz = self.headers.get("Authorization")
        if write:
            self.auth.check_write(authz)
        meta = self.store.meta(repo_type, repo_id)
        self.auth.check_read(authz, bool(meta and meta["private"]))
        if meta is None:
            raise StoreError(404, "Repository not found", "RepoNotFound")
        return repo_type, repo_id
