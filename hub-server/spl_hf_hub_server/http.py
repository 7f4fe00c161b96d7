"""HTTP plumbing of the local Hub server that treats every client as hostile.

- :func:`header_value`: every response header value passes through it, so no request data (a path,
  a revision, an error message quoting them) can add a header or end the header block.
- :class:`LimitedReader`: a request body read through it can never exceed its route's cap.
- :class:`BoundedThreadingServer`: at most ``max_connections`` handler threads; a connection
  beyond that gets a 503 in the Hub's JSON error shape and is closed, never queued on a thread;
  a request whose line and headers are not in within ``header_timeout_s`` is cut off.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import threading
import time
from http.server import ThreadingHTTPServer
from typing import BinaryIO

from spl_hf_hub_server.errors import StoreError

_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")  # RFC 9110 field-name
_UNSAFE = re.compile(r"[^\x20-\x7e]")  # control characters (CR, LF, NUL, DEL...) and non-ASCII


def header_value(value: object) -> str:
    """``value`` as a header value: each unsafe character percent-encoded (as UTF-8 bytes)."""
    return _UNSAFE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode("utf-8")), str(value))


def header_name(name: str) -> str:
    if not _TOKEN.match(name):  # names are chosen by the server, never by a client: a bug if bad
        raise ValueError(f"invalid response header name {name!r}")
    return name


def error_body(status: int, message: str, code: str | None = None) -> tuple[bytes, dict[str, str]]:
    """The Hub's error shape: a JSON ``{"error": ...}`` body and the ``X-Error-*`` headers."""
    headers = {"X-Error-Message": message}
    if code:
        headers["X-Error-Code"] = code
    return json.dumps({"error": message}).encode(), headers


class LimitedReader:
    """At most ``limit`` bytes from ``raw``; reading past the limit is a 413."""

    def __init__(self, raw: BinaryIO, limit: int, what: str) -> None:
        self._raw, self._left, self._what, self._limit = raw, limit, what, limit

    def read(self, n: int = -1) -> bytes:
        want = self._left + 1 if n < 0 else min(n, self._left + 1)
        data = self._raw.read(want) if want else b""
        if len(data) > self._left:
            raise StoreError(413, f"{self._what} is larger than {self._limit} bytes", "PayloadTooLarge")
        self._left -= len(data)
        return data


class BoundedThreadingServer(ThreadingHTTPServer):
    """A thread per connection, at most ``max_connections`` of them."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(
        self, address: tuple[str, int], handler: type, max_connections: int, header_timeout_s: float
    ) -> None:
        self._slots = threading.BoundedSemaphore(max_connections)
        self.max_connections = max_connections
        self.header_timeout_s = header_timeout_s
        self._deadlines: dict[socket.socket, float] = {}
        self._deadlines_lock = threading.Lock()
        self._closing = threading.Event()
        super().__init__(address, handler)
        threading.Thread(target=self._watch, name="spl-hf-hub-deadlines", daemon=True).start()

    # A client that trickles its request line and headers a byte at a time never trips the idle
    # timeout; one watchdog thread cuts off every connection whose headers are not in by the deadline.
    def expect_headers(self, conn: socket.socket) -> None:
        with self._deadlines_lock:
            self._deadlines[conn] = time.monotonic() + self.header_timeout_s

    def headers_received(self, conn: socket.socket) -> None:
        with self._deadlines_lock:
            self._deadlines.pop(conn, None)

    def _watch(self) -> None:
        while not self._closing.wait(min(0.25, self.header_timeout_s / 4)):
            now = time.monotonic()
            with self._deadlines_lock:
                late = [c for c, t in self._deadlines.items() if t < now]
                for conn in late:
                    del self._deadlines[conn]
            for conn in late:
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)  # its handler's read ends; the handler closes it

    def server_close(self) -> None:
        self._closing.set()
        super().server_close()

    def process_request(self, request: socket.socket, client_address: object) -> None:
        if not self._slots.acquire(blocking=False):
            self._refuse(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: socket.socket, client_address: object) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def _refuse(self, request: socket.socket) -> None:
        """503 on the accepting thread: short, with a send timeout, so it cannot block accepting."""
        body, headers = error_body(503, f"server busy: {self.max_connections} connections open; retry later")
        head = "".join(f"{k}: {header_value(v)}\r\n" for k, v in headers.items())
        response = (
            f"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\nRetry-After: 1\r\n{head}\r\n"
        ).encode() + body
        try:
            request.settimeout(1.0)
            request.sendall(response)
        except OSError:
            pass
        self.shutdown_request(request)


MAX_CHUNK_LINE = 1024  # a chunk-size line (hex size and extensions); longer is a malformed body


class Dechunk:
    """Reader over an HTTP/1.1 chunked request body; a malformed chunk is a 400, never a dropped
    connection or a huge allocation (reads go in blocks of at most 1 MiB)."""

    def __init__(self, raw: BinaryIO) -> None:
        self._raw, self._left, self._done = raw, 0, False

    def _next_size(self) -> int:
        line = self._raw.readline(MAX_CHUNK_LINE + 1)
        if len(line) > MAX_CHUNK_LINE:
            raise StoreError(400, "malformed chunked body: chunk-size line too long")
        size = line.split(b";")[0].strip()
        if not size or len(size) > 15 or not all(c in b"0123456789abcdefABCDEF" for c in size):
            raise StoreError(400, f"malformed chunked body: bad chunk size {size[:20]!r}")
        return int(size, 16)

    def read(self, n: int = -1) -> bytes:
        out = bytearray()
        while not self._done and (n < 0 or len(out) < n):
            if self._left == 0:
                self._left = self._next_size()
                if self._left == 0:
                    while self._raw.readline(MAX_CHUNK_LINE).strip():  # trailers
                        pass
                    self._done = True
                    break
            want = self._left if n < 0 else min(self._left, n - len(out))
            block = self._raw.read(min(want, 1 << 20))
            if not block:
                raise StoreError(400, "chunked body ended early")
            out += block
            self._left -= len(block)
            if self._left == 0:
                self._raw.readline(MAX_CHUNK_LINE)  # CRLF after the chunk
        return bytes(out)


# Query parameters whose values are safe to log; every other value (``token``, an upload ``sig``,
# anything a client invents) is logged as <redacted>.
LOGGED_PARAMS = frozenset({"recursive", "expand", "blobs", "create_pr", "limit", "author", "search", "size"})
_QUERY = re.compile(r"\?([^\s\"']*)")


def _redact_query(query: str) -> str:
    out = []
    for pair in query.split("&"):
        name, eq, _ = pair.partition("=")
        out.append(pair if name in LOGGED_PARAMS or not eq else f"{name}=<redacted>")
    return "?" + "&".join(out)


def redact(line: str) -> str:
    """A log line with every query-string value outside :data:`LOGGED_PARAMS` replaced."""
    return _QUERY.sub(lambda m: _redact_query(m.group(1)), line)
