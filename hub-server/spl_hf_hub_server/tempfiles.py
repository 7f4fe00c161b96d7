"""Temporary files of the store: each locked by its writer while it lives, so a sweep can tell an
abandoned one (a killed upload, commit or server) from one being written.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

UPLOAD_PREFIX = "upload-"
SWEEP_MIN_AGE_S = 2.0  # longer than the instant between creating a temporary file and locking it
# Temporaries a writer leaves only when killed, relative to a repo folder (see temp_file).
TEMP_GLOBS = (f"tmp/{UPLOAD_PREFIX}*", "blobs/.*", "commits/.*", ".refs.json.*", ".meta.json.*")


@contextmanager
def temp_file(folder: Path, prefix: str) -> Iterator[tuple[BinaryIO, Path]]:
    """A new temporary file in ``folder``, locked while its writer lives (a sweep leaves it alone
    until then); removed unless the caller renamed it into place."""
    fd, tmp = tempfile.mkstemp(prefix=prefix, dir=folder)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with os.fdopen(fd, "wb") as fh:
            yield fh, Path(tmp)
    finally:
        Path(tmp).unlink(missing_ok=True)


def write_atomic(path: Path, data: bytes) -> None:
    with temp_file(path.parent, f".{path.name}.") as (fh, tmp):
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
        os.replace(tmp, path)
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def remove_if_orphan(path: Path, min_age_s: float) -> int | None:
    """Remove ``path`` when no writer holds its lock and it is at least ``min_age_s`` old: its size."""
    if not path.is_file() or path.is_symlink():
        return None
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:  # finished or removed meanwhile
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        st = os.fstat(fd)
        if time.time() - st.st_mtime < min_age_s:
            return None  # maybe created an instant ago, before its writer took the lock
        path.unlink(missing_ok=True)
        return st.st_size
    except BlockingIOError:
        return None  # a write in progress
    finally:
        os.close(fd)
