"""JSON documents (``.json``, optionally ``.gz``): a list of records, or an object of equal-length columns.

A list is scanned item by item (``raw_decode`` and a resync to the next item at the same depth), so
one bad item costs only itself; a list that is never closed is a cut file (``truncated_file``).
An object of columns is one value: any damage in it is damage to the whole file.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from spl_hf.sources.formats.damage import (
    BOM,
    SURROGATE,
    SURROGATE_ESCAPE,
    Break,
    Records,
    SourceFileError,
    UnparsableRecord,
    chunks,
    cut_tail,
    lone_surrogate,
    surrogate_path,
    truncation,
)
from spl_hf.sources.formats.jsonvalue import DECODER, DuplicateKey, as_record, decode_error

_STRUCTURE = re.compile(r'["\\\[\]{},]')
_WS = re.compile(r"[ \t\n\r]*")


def _value_end(text: str, pos: int) -> int:
    """End of the (possibly invalid) JSON value at `pos`: the next ``,``/``]``/``}`` at its depth."""
    depth, in_string = 0, False
    while True:
        match = _STRUCTURE.search(text, pos)
        if match is None:
            return len(text)
        char, pos = match.group(), match.end()
        if in_string:
            if char == "\\":
                pos += 1
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
        elif char in "]}":
            if depth == 0:
                return pos - 1
            depth -= 1
        elif char == "," and depth == 0:
            return pos - 1


def _skip_ws(text: str, pos: int) -> int:
    return _WS.match(text, pos).end()  # type: ignore[union-attr]


def _byte_offset(text: str, pos: int) -> int:
    return len(text[:pos].encode("utf-8", "surrogateescape"))


def _text_damage(text: str, start: int, end: int, what: str, record: Any) -> Any:
    """The item's bytes that are not UTF-8 (decoded as surrogate escapes), or a lone surrogate escape."""
    raw = text[start:end]
    if not (SURROGATE_ESCAPE.search(raw) or SURROGATE.search(raw)):
        return record
    bad_byte = SURROGATE.search(raw)
    if bad_byte and "\udc80" <= bad_byte.group() <= "\udcff":
        offset = _byte_offset(text, start + bad_byte.start())
        byte = ord(bad_byte.group()) - 0xDC00
        return UnparsableRecord(
            f"{what}: byte 0x{byte:02x} at byte offset {offset} is not UTF-8 "
            "(the file may be Latin-1/cp1252; re-save it as UTF-8)",
            "invalid_utf8",
        )
    where = surrogate_path(record)
    return record if where is None else lone_surrogate(where, what)


def _item(text: str, pos: int, what: str) -> tuple[dict[str, Any] | UnparsableRecord, int]:
    """The list item at `pos` (a record or what is wrong with it) and where it ends."""
    try:
        value, end = DECODER.raw_decode(text, pos)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError and DuplicateKey are ValueErrors
        return decode_error(exc, what), _value_end(text, pos)
    record = as_record(value, what)
    if isinstance(record, dict):
        record = _text_damage(text, pos, end, what, record)
    return record, end


def _unclosed(path: Path, records: Records, brk: Break | None) -> None:
    """The tail entry of a list that is never closed (the item it breaks off in goes with it)."""
    if records and isinstance(records[-1], UnparsableRecord):
        records.pop()  # the item the file breaks off in (a cut object cannot parse)
    where = f"item {len(records)} and anything after it"
    if brk is not None:
        records.append(truncation(path, brk, where))
    else:
        records.append(cut_tail(path, where, "the file ends before the JSON list is closed (truncated?)"))


def _json_items(path: Path, text: str, brk: Break | None, limit: int | None = None) -> Records:
    """The items of a top-level JSON list, each parsed on its own so one bad item costs only itself."""
    records: Records = []
    pos = _skip_ws(text, 1)
    closed = pos < len(text) and text[pos] == "]"
    pos += closed
    while not closed and pos < len(text):
        if limit is not None and len(records) >= limit:
            return records
        what = f"item {len(records)}"
        record, pos = _item(text, pos, what)
        records.append(record)
        pos = _skip_ws(text, pos)
        if pos >= len(text):
            break
        if text[pos] not in ",]":
            raise SourceFileError(
                f"{path}: invalid JSON list: expected ',' or ']' after {what} at byte offset {_byte_offset(text, pos)}"
            )
        closed = text[pos] == "]"
        pos = pos + 1 if closed else _skip_ws(text, pos + 1)
    if not closed:
        _unclosed(path, records, brk)
    elif _skip_ws(text, pos) < len(text):
        raise SourceFileError(
            f"{path}: invalid JSON: data after the closing ']' at byte offset {_byte_offset(text, pos)}"
        )
    return records


def _columns_document(path: Path, text: str) -> Records:
    """A JSON object of equal-length columns, as records; any damage fails the file."""
    if SURROGATE.search(text):
        at = SURROGATE.search(text)
        assert at is not None
        raise SourceFileError(f"{path}: byte offset {_byte_offset(text, at.start())} is not UTF-8")
    try:
        data = DECODER.decode(text)
    except DuplicateKey as exc:
        raise SourceFileError(f"{path}: {decode_error(exc, 'the JSON document').detail}") from None
    except json.JSONDecodeError as exc:
        raise SourceFileError(f"{path}: invalid JSON ({exc})") from None
    except (ValueError, RecursionError) as exc:
        raise SourceFileError(f"{path}: {decode_error(exc, 'the JSON document').detail}") from None
    if isinstance(data, dict) and data and all(isinstance(v, list) for v in data.values()):
        lengths = {len(v) for v in data.values()}
        if len(lengths) != 1:
            raise SourceFileError(
                f"{path}: columnar JSON with columns of different lengths {sorted(lengths)}"
            )
        keys = list(data)
        return [dict(zip(keys, values, strict=True)) for values in zip(*data.values(), strict=True)]
    raise SourceFileError(f"{path}: expected a JSON list of records or an object of equal-length columns")


def read_json(path: Path, limit: int | None = None) -> Records:
    brk: list[Break | None] = [None]
    data = b"".join(chunks(path, brk))
    if data.startswith(BOM):
        data = data[3:]
    # Undecodable bytes become lone surrogates, so the item holding them is found and quarantined.
    text = data.decode("utf-8", "surrogateescape")
    start = _skip_ws(text, 0)
    if start >= len(text):
        if brk[0] is not None:
            return [truncation(path, brk[0], "the whole file")]
        return []
    if text[start] == "[":
        return _json_items(path, text[start:], brk[0], limit)
    if brk[0] is not None:
        raise SourceFileError(f"{path}: {brk[0].why} after {brk[0].offset} decompressed bytes")
    return _columns_document(path, text)[:limit]
