"""HTTP client for an OpenAI-compatible server: JSON requests with retries, the key from the environment.

Answers of 429 and 5xx, timeouts, dropped connections and replies that are truncated or do not parse
into what the caller expects are retried, with exponential backoff or the server's ``Retry-After``.
Requests are deterministic (temperature 0 or a fixed seed), so a retried one asks the same question; the
result store makes finished ones free on a rerun. The API key comes only from ``OPENAI_API_KEY`` and
goes only into the ``Authorization`` header: never into errors, logs or recorded identity.
"""

from __future__ import annotations

import email.utils
import http.client
import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import urlsplit

from spl_hf.errors import SplHfError

T = TypeVar("T")
KEY_ENV = "OPENAI_API_KEY"
MAX_WAIT_S = 60.0  # a Retry-After or backoff is capped here


class ServerError(OSError):
    """The server kept failing (or refused the request) after every retry: the run stops, nothing guessed."""


class ServedClient:
    def __init__(self, base_url: str, timeout: float = 120.0, retries: int = 5, backoff: float = 0.5) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise SplHfError(f"base_url: expected http(s)://host[:port]/v1, got {base_url!r}")
        if parts.username or parts.password:
            raise SplHfError("base_url: credentials in the URL are refused; set OPENAI_API_KEY instead")
        self.base = base_url.rstrip("/")
        self.host = parts.hostname + (f":{parts.port}" if parts.port else "")
        self.timeout = float(timeout)
        self.retries = int(retries)
        self.backoff = float(backoff)
        self.retried = 0  # attempts repeated after a fault, for run statistics and tests
        self.wait_s = 0.0  # time spent waiting on the server (send to last byte), for the benchmark

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        key = os.environ.get(KEY_ENV)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def _once(self, method: str, path: str, body: Any) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(f"{self.base}/{path}", data=data, method=method, headers=self._headers())
        t0 = time.perf_counter()
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                raw = resp.read()
        finally:
            self.wait_s += time.perf_counter() - t0
        return json.loads(raw)

    def request(self, method: str, path: str, body: Any, parse: Callable[[Any], T]) -> T:
        """``parse`` of the JSON reply; faults retried (see the module docstring)."""
        last = ""
        for attempt in range(self.retries + 1):
            try:
                return parse(self._once(method, path, body))
            except urllib.error.HTTPError as exc:
                if exc.code != 429 and exc.code < 500:
                    detail = exc.read()[:300].decode("utf-8", "replace")
                    raise ServerError(f"{self.host} {path}: HTTP {exc.code}: {detail}") from None
                last, wait = f"HTTP {exc.code}", retry_after(exc.headers.get("Retry-After"))
            except (TimeoutError, urllib.error.URLError, http.client.HTTPException, ConnectionError) as exc:
                last, wait = f"{type(exc).__name__}: {getattr(exc, 'reason', exc)}", None
            except (ValueError, KeyError, IndexError, TypeError) as exc:  # truncated or malformed reply
                last, wait = f"malformed reply ({type(exc).__name__}: {str(exc)[:120]})", None
            if attempt == self.retries:
                break
            self.retried += 1
            time.sleep(min(MAX_WAIT_S, wait if wait is not None else self.backoff * 2**attempt))
        raise ServerError(f"{self.host} {path}: still failing after {self.retries} retries ({last})")

    def post(self, path: str, body: Any, parse: Callable[[Any], T]) -> T:
        return self.request("POST", path, body, parse)

    def model_id(self, wanted: str | None) -> str:
        """The id the server reports for ``wanted`` (or its only model when ``wanted`` is unset)."""
        ids = self.request("GET", "models", None, lambda r: [str(m["id"]) for m in r["data"]])
        if wanted and wanted in ids:
            return wanted
        if not wanted and len(ids) == 1:
            return ids[0]
        raise SplHfError(
            f"model {wanted!r}: the server at {self.host} serves {ids}; set model to one of them"
        )


def retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or an HTTP date); None when absent or bad."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
