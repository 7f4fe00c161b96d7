"""Producer identities shared by the SPL build and its audit: the fields that name a model output's
producer, their validation, and the short key a released row carries for one identity.

The key is the first 16 hex digits of the SHA-256 of the identity's canonical JSON (its
:data:`IDENTITY_FIELDS` only, sorted keys, no spaces), so the audit recomputes it from the identity
the build report lists and needs no table of its own.

>>> identity_key(("org/m", "abc", "hf", "float32", "constrained", "t1"))
'9d1126dea60cca98'
>>> identity_key(None) is None
True
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

from spl_hf.errors import SplHfError

IDENTITY_FIELDS = ("model_id", "model_revision", "backend", "dtype", "mode", "template_hash")


def record_identity(rec: Mapping, key: str, where: str) -> tuple | None:
    """The identity a record names under ``key`` (values in :data:`IDENTITY_FIELDS` order), or None
    when it names none; a malformed one raises naming the file, line and field."""
    ident = rec.get(key)
    if ident is None:
        return None
    at = f"{where}:{rec.get('_line', '?')}"
    if not isinstance(ident, dict):
        raise SplHfError(f"{at}: field {key!r} must be an object or null, got {type(ident).__name__}")
    unknown = sorted(set(ident) - set(IDENTITY_FIELDS))
    if unknown:
        raise SplHfError(f"{at}: field {key!r} has unknown keys {unknown} (known: {list(IDENTITY_FIELDS)})")
    values = tuple(ident.get(f) for f in IDENTITY_FIELDS)
    for name, v in zip(IDENTITY_FIELDS, values, strict=True):
        if v is not None and not isinstance(v, str):
            raise SplHfError(f"{at}: field {key}.{name} must be a string or null, got {v!r}")
    return values


def identity_key(values: tuple | None) -> str | None:
    """The row key of one identity (None for none: a key is never invented)."""
    if values is None:
        return None
    canonical = json.dumps(
        dict(zip(IDENTITY_FIELDS, values, strict=True)), sort_keys=True, separators=(",", ":")
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def stated_key(ident: Mapping) -> str | None:
    """The key of an identity object as the build report lists it (its identity fields only)."""
    return identity_key(tuple(ident.get(f) for f in IDENTITY_FIELDS))
