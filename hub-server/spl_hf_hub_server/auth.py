"""Token checks of the local Hub server, with the statuses and messages the Hub client maps.

A server started without a token is open: anyone may read and write and ``private`` only
records the flag. With a token, writes need it, private repos are reported as not found to
anyone without it, and a request carrying any other token is refused outright (as the Hub
refuses an invalid token even on public repos). Upload URLs handed out by the LFS batch call
are signed, because the client sends the upload itself without an Authorization header.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from spl_hf_hub_server.errors import StoreError

INVALID = "Invalid credentials in Authorization header"  # the message the client recognises


class Auth:
    def __init__(self, token: str | None) -> None:
        self._token = token or None
        self._key = secrets.token_bytes(32)

    @property
    def enabled(self) -> bool:
        return self._token is not None

    def authenticated(self, authorization: str | None) -> bool:
        """Whether the request holds the server token; raises 401 for a wrong one."""
        presented = _bearer(authorization)
        if presented is None:
            return False
        if self._token is None:
            return True
        if not hmac.compare_digest(presented.encode(), self._token.encode()):
            raise StoreError(401, INVALID)
        return True

    def check_read(self, authorization: str | None, private: bool) -> None:
        ok = self.authenticated(authorization)
        if private and self.enabled and not ok:
            raise StoreError(401, "Repository not found", "RepoNotFound")

    def check_write(self, authorization: str | None) -> None:
        if self.enabled and not self.authenticated(authorization):
            raise StoreError(401, "You must be authenticated with a write token to do this")

    def sign(self, message: str) -> str:
        return hmac.new(self._key, message.encode(), hashlib.sha256).hexdigest()

    def verify_signature(self, message: str, signature: str) -> None:
        if not hmac.compare_digest(self.sign(message), signature or ""):
            raise StoreError(403, "invalid or missing upload signature")


def _bearer(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, value = authorization.partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        raise StoreError(401, INVALID)
    return value.strip()
