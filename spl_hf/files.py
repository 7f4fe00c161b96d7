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
from collections.abc import Callable, Iterable, Iterator
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


def json_text(
    obj: Any,
    *,
    indent: int | None = 2,
    sort_keys: bool = False,
    ascii_only: bool = False,
    compact: bool = False,
    default: Callable[[Any], Any] | None = None,
) -> str:
    """The project's one spelling of a JSON file, final newline included.

    Sorted or not, indented or not, is the caller's choice. ``ascii_only`` escapes non-ASCII text
    (``\\u2013``): the spelling of the files written that way since their first release (card.json,
    build reports), kept so their bytes do not change; new files keep UTF-8. ``compact``: one line,
    no spaces after separators (the assignment certificate). ``default``: how a value JSON lacks is written.
    """
    separators = (",", ":") if compact else None
    text = json.dumps(
        obj,
        indent=None if compact else indent,
        sort_keys=sort_keys,
        ensure_ascii=ascii_only,
        separators=separators,
        default=default,
    )
    return text + "\n"


def write_json(path: str | Path, obj: Any, **spelling: Any) -> Path:
    """Write ``obj`` as :func:`json_text` spells it (``spelling``: its keywords), atomically; returns the path."""
    return write_text(path, json_text(obj, **spelling))


# The one set of Parquet writer settings: a table always gives the same bytes, whoever writes it.
PARQUET_SETTINGS: dict[str, Any] = {"compression": "zstd", "compression_level": 3}
# Rows per row group, for every file written. A table of more rows is written a row group at a time, so
# a table held with dictionaries (spl_hf.held) is decoded one row group at a time (at the card, about
# 57 MB of judge scores, not a 500 MB shard); readers that stream a file take it by row groups too.
ROW_GROUP_ROWS = 1 << 17


def parquet_bytes(table: Any) -> bytes:
    """``table`` (a ``pyarrow.Table``) as Parquet file bytes, with :data:`PARQUET_SETTINGS`."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, row_group_size=ROW_GROUP_ROWS, **PARQUET_SETTINGS)
    return sink.getvalue().to_pybytes()


def write_parquet(path: str | Path, table: Any, schema: Any = None) -> Path:
    """Write ``table`` (a ``pyarrow.Table``) to ``path`` as Parquet, atomically; returns the path.

    ``schema``: what the file stores, where ``table`` holds it otherwise (dictionaries): each row group
    is cast to it as it is written. The bytes are those of the table cast whole."""
    if schema is None or schema.equals(table.schema, check_metadata=True):
        import pyarrow.parquet as pq

        with atomic_path(path) as tmp:
            pq.write_table(table, tmp, row_group_size=ROW_GROUP_ROWS, **PARQUET_SETTINGS)
        return Path(path)
    groups = (
        table.slice(start, ROW_GROUP_ROWS).cast(schema) for start in range(0, table.num_rows, ROW_GROUP_ROWS)
    )
    return write_parquet_batches(path, schema, groups if table.num_rows else [table.cast(schema)])


def write_parquet_batches(path: str | Path, schema: Any, tables: Iterable[Any]) -> Path:
    """Write ``tables`` (``pyarrow.Table``s of ``schema``) to ``path`` as one Parquet file, one row group
    or more each, atomically, with :data:`PARQUET_SETTINGS`: for a file too large to hold as one table."""
    import pyarrow.parquet as pq

    with atomic_path(path) as tmp, pq.ParquetWriter(tmp, schema, **PARQUET_SETTINGS) as writer:
        for table in tables:
            writer.write_table(table, row_group_size=ROW_GROUP_ROWS)
    return Path(path)


def replace_dir(new: Path, path: Path, aside_tag: str = ".old") -> None:
    """Move the finished folder ``new`` to ``path``: the one folder swap.

    An existing ``path`` is first renamed aside (a hidden sibling tagged ``aside_tag``), the new one
    renamed in, and only then the old one deleted; if the second rename fails, the old folder is put
    back. So at every instant a whole folder sits at ``path`` or aside, never a half-deleted one.
    """
    import shutil

    path = refuse_symlink(path)
    if not path.exists():
        os.rename(new, path)
        return
    old = temp_dir_beside(path, aside_tag)
    old.rmdir()  # a name no one else holds; rename needs it free
    os.rename(path, old)
    try:
        os.rename(new, path)
    except BaseException:
        os.rename(old, path)  # put the previous folder back
        raise
    shutil.rmtree(old)


@contextmanager
def atomic_dir(path: str | Path, tag: str = ".partial") -> Iterator[Path]:
    """Yield a new hidden sibling folder to fill; on success it replaces ``path`` (:func:`replace_dir`),
    on failure it is removed."""
    import shutil

    path = refuse_symlink(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_dir_beside(path, tag)
    try:
        yield tmp
        replace_dir(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


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
