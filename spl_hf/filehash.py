"""SHA-256 of files and folders, read in blocks: one definition for manifests, audits and stage keys."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from pathlib import Path


def sha256_file(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def files_sha256(
    named: Iterable[tuple[str, str | Path]], file_hash: Callable[[Path], str] | None = None
) -> str:
    """SHA-256 over ``name NUL sha256(file) NUL`` for each (name, file), in the order given.

    The names (relative paths) are part of the digest, so a renamed or moved file changes it;
    ``file_hash`` replaces the plain file hash (a memoised one for large model weights).
    """
    hash_file = file_hash or sha256_file
    h = hashlib.sha256()
    for name, path in named:
        h.update(name.encode() + b"\0" + hash_file(Path(path)).encode() + b"\0")
    return h.hexdigest()
