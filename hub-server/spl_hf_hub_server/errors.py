"""The one error type of the local Hub server: an HTTP status, a message and the Hub's error code."""

from __future__ import annotations


class StoreError(Exception):
    """An error with the HTTP status and Hub error code a client expects for it."""

    def __init__(self, status: int, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
