"""The one writer of files: atomic, never through a symlink, never a fixed temporary name.

Every file spl_hf writes goes through :func:`atomic_path` (or the helpers built on it): the bytes
go to a new hidden sibling with a random name, which is renamed over the destination only once it
is whole, and removed on any failure. Two processes writing the same output therefore never share a
temporary file, and a reader never sees half a file. A destination that is a symlink is refused:
renaming over it would replace the user's link, and opening it would write into the link's target.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from spl_hf.errors import OutputError


def refuse_symlink(path: str | Path) -> Path:
    """Raise ``OutputError`` when ``path`` itself is a symlink; returns it as a ``Path``."""
    path = Path(path)
    if path.is_symlink():
        raise OutputError(f"{path}: is a symlink; spl_hf never writes through a link (remove it first)")
    return path


def temp_beside(path: Path, suffix: str = ".partial") -> Path:
    """A new empty hidden sibling of ``path`` with a random name (mode 0666 minus the umask)."""
    while True:
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}{suffix}")
        try:
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            return tmp
        except FileExistsError:
            continue


def temp_dir_beside(path: Path, tag: str = ".partial") -> Path:
    """A new empty hidden sibling folder ``.<name><tag>-<random>`` of ``path``.

    Made with ``mkdir``, so it honours the umask (``mkdtemp`` would give 0700). For outputs that are
    folders, filled here and renamed into place.
    """
    while True:
        tmp = path.with_name(f".{path.name}{tag}-{secrets.token_hex(6)}")
        try:
            tmp.mkdir(parents=False)
            return tmp
        except FileExistsError:
            continue


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary sibling to write; on success it replaces ``path``, on failure it is removed."""
    path = refuse_symlink(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_beside(path)
    try:
        yield tmp
        refuse_symlink(path)  # a link planted while we wrote is still never replaced
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_bytes(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically; returns the path."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)
    return Path(path)


def write_text(path: str | Path, text: str) -> Path:
    """Write UTF-8 ``text`` to ``path`` atomically (no newline translation); returns the path."""
    return write_bytes(path, text.encode("utf-8"))


def write_json(path: str | Path, obj: Any, *, indent: int | None = 2, sort_keys: bool = False) -> Path:
    """Write ``obj`` as JSON with a final newline, atomically; returns the path."""
    text = json.dumps(obj, indent=indent, sort_keys=sort_keys, ensure_ascii=False)
    return write_text(path, text + "\n")


def jsonl_line(row: Any) -> str:
    """One JSON Lines record: the project's one spelling (UTF-8 kept, keys in given order)."""
    return json.dumps(row, ensure_ascii=False) + "\n"


@contextmanager
def text_writer(path: str | Path) -> Iterator[TextIO]:
    """A UTF-8 text file (no newline translation) written as the block goes, put in place at its end."""
    with atomic_path(path) as tmp, tmp.open("w", encoding="utf-8", newline="\n") as fh:
        yield fh


def write_jsonl(path: str | Path, rows: Iterable[Any]) -> Path:
    """Write ``rows`` as JSON Lines atomically; returns the path."""
    with text_writer(path) as fh:
        for row in rows:
            fh.write(jsonl_line(row))
    return Path(path)
