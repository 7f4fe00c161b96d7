"""Small helpers the route families share: repo types and URL prefixes, and the Hub's timestamps."""

from __future__ import annotations

import datetime as dt
import hashlib


def repo_type_of(plural_or_prefix: str | None) -> str:
    return {"datasets": "dataset", "models": "model", "spaces": "space", None: "model"}[plural_or_prefix]


def url_prefix(repo_type: str) -> str:
    return {"dataset": "datasets/", "space": "spaces/", "model": ""}[repo_type]


def iso(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def object_id(repo_id: str) -> str:
    """The Hub's 24-hex ``_id`` of a repo (stable per id here)."""
    return hashlib.sha1(repo_id.encode()).hexdigest()[:24]
