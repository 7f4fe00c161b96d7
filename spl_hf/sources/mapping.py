"""Column mappings: which column of a user's file holds what an adapter reads.

``{"prompt": "question", "chosen": "response_j", "rejected": "response_k"}`` reads the file's
``question`` column as ``prompt`` and so on; columns the mapping does not name keep their names. A
mapping is checked against the file before any record is converted (and so before any model
loads): a mapped column the file does not have is refused, naming the file and the column.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from spl_hf.errors import SplHfError
from spl_hf.sources.formats.damage import RawTable

ColumnMap = tuple[tuple[str, str], ...]  # (what the adapter reads, the file's column), sorted

# A source name becomes a split name, a file name and part of every pair_id and scenario_id.
SOURCE_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")


class MappingError(SplHfError):
    """A column mapping or source name that cannot be used; the message names it and the file."""


def parse_columns(value: Mapping[str, str] | Iterable[str] | None, what: str = "columns") -> ColumnMap:
    """A mapping given as a dict (a recipe) or as ``read=column`` entries (the command line)."""
    if not value:
        return ()
    if isinstance(value, Mapping):
        items = list(value.items())
    elif isinstance(value, str):
        raise MappingError(f"{what}: expected a mapping or a list of 'name=column' entries, got {value!r}")
    else:
        items = []
        for entry in value:
            name, sep, column = str(entry).partition("=")
            if not sep:
                raise MappingError(f"{what}: expected 'name=column', got {entry!r}")
            items.append((name, column))
    out: dict[str, str] = {}
    for name, column in items:
        if not isinstance(name, str) or not isinstance(column, str) or not name.strip() or not column.strip():
            raise MappingError(f"{what}: {name!r}: {column!r}: names and columns must be non-empty text")
        if name.strip() in out:
            raise MappingError(f"{what}: {name.strip()!r} is mapped twice")
        out[name.strip()] = column.strip()
    return tuple(sorted(out.items()))


def check_source_name(name: str, taken: Iterable[str], what: str = "source_name") -> str:
    if not isinstance(name, str) or not SOURCE_NAME.fullmatch(name):
        raise MappingError(
            f"{what}: {name!r} must be lower_snake_case (a letter, then letters, digits or '_', at most 64): "
            "it names the split and every pair_id"
        )
    if name in set(taken):
        raise MappingError(f"{what}: {name!r} is a built-in adapter's name; choose another source name")
    return name


def apply_columns(table: RawTable, columns: ColumnMap, reads: Iterable[str], source: str) -> RawTable:
    """The table with its mapped columns renamed to what the adapter reads.

    ``reads`` are the names the adapter knows; a mapping onto another name, or from a column the
    file lacks, is refused naming the file. A file column named like a target it is not mapped to is
    set aside (renamed ``<name> (unmapped)``), so the mapped column is the only one read.
    """
    if not columns:
        return table
    known = set(reads)
    unknown = sorted(name for name, _ in columns if name not in known)
    if unknown:
        raise MappingError(
            f"{source}: {table.origin}: columns maps {', '.join(map(repr, unknown))}, which this adapter does "
            f"not read (it reads {', '.join(sorted(known))})"
        )
    readable = any(isinstance(r, dict) for r in table.records) or table.columns
    lacking = [f"{column!r} (for {name})" for name, column in columns if column not in table.columns]
    if readable and lacking:
        raise MappingError(
            f"{source}: {table.origin}: no column {', '.join(lacking)}; the file has "
            f"{', '.join(table.columns) or 'no columns'}"
        )
    rename = {column: name for name, column in columns}
    shadowed = {name for name, column in columns if name != column and name in table.columns}
    shadowed -= set(rename)  # a column that is itself mapped elsewhere keeps its new name

    def key(k: str) -> str:
        return rename.get(k) or (f"{k} (unmapped)" if k in shadowed else k)

    records = [{key(k): v for k, v in r.items()} if isinstance(r, dict) else r for r in table.records]
    return RawTable(records, tuple(key(c) for c in table.columns), table.origin)
