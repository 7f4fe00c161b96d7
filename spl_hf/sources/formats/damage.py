"""What every format reader shares: the raw table, the byte and line streams, and the damage policy.

Damage is handled per record wherever the records around it are intact, and per file otherwise:

- per record (an :class:`UnparsableRecord` in the table, quarantined by the pool reader, the other
  records kept): a JSON line or list item that is not valid JSON or holds an integer longer than
  Python converts (``unparsable_record``), a key given twice (``duplicate_key``: JSON keeps the last
  value silently, so which one the source meant is unknown), nested deeper than the parser can follow
  (``too_deep``), bytes that are not UTF-8 (``invalid_utf8``, with the byte offset) or a lone
  surrogate escape such as ``\\ud800`` (``lone_surrogate``); a CSV record with a stray quote or the
  wrong number of cells (``bad_csv_row``);
- the tail of a file (one ``truncated_file`` entry after every intact record; the pool reader then
  refuses the file unless ``accept_partial``): a gzip stream that ends early or is corrupt, a JSON
  list that is never closed, a ``.jsonl`` whose last line has no newline and is not a whole record;
- the whole file (:class:`SourceFileError` naming the file, or ``FileNotFoundError``): missing, a
  directory, a Git LFS pointer instead of the data, a ``.gz`` that is not gzip, an unreadable
  parquet file, a JSON document that is not a list of records or an object of equal-length columns,
  a CSV header that names a column twice.

A UTF-8 byte-order mark at the start of any text file is ignored.
"""

from __future__ import annotations

import re
import sys
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from spl_hf.errors import SplHfError
from spl_hf.jsonl import LFS_POINTER  # the one prefix (any spec version)

BOM = b"\xef\xbb\xbf"
_GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 1 << 20
# A JSON text can only hold a lone surrogate through a \uXXXX escape; only such lines are walked.
SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
SURROGATE = re.compile("[\ud800-\udfff]")


class SourceFileError(SplHfError):
    """A source file that cannot be read as a whole; the message names the file and why."""


@dataclass(frozen=True)
class UnparsableRecord:
    """A record slot whose bytes could not be decoded into a mapping (kept so it is reported)."""

    detail: str
    reason: str = "unparsable_record"
    field: str | None = None


Records = list[dict[str, Any] | UnparsableRecord]


class RawTable(NamedTuple):
    records: Records
    columns: tuple[str, ...]  # every column seen, in order of first appearance
    origin: str


def columns_of(records: Records) -> tuple[str, ...]:
    seen: dict[str, Any] = {}
    for record in records:
        if isinstance(record, dict):
            seen.update(record)  # only the keys are used: new ones go last, known ones stay put
    return tuple(seen)


def show(value: object, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- bytes ------------------------------------------------------------------------------------


class Break(NamedTuple):
    """Where a compressed stream stopped being readable (after `offset` decompressed bytes)."""

    offset: int
    why: str


def check_head(path: Path, head: bytes) -> None:
    if head.startswith(LFS_POINTER):
        raise SourceFileError(
            f"{path}: Git LFS pointer, not the data: run git lfs pull in the clone it came from "
            "(or download the file itself)"
        )


def _gunzip(handle: Any, out: list[Break | None]) -> Iterator[bytes]:
    """Decompressed chunks of every gzip member; a broken stream ends early with `out[0]` set."""
    decomp = zlib.decompressobj(wbits=31)
    in_member, total = False, 0
    while True:
        raw = handle.read(_CHUNK)
        if not raw:
            break
        while raw:
            try:
                data = decomp.decompress(raw)
            except zlib.error as exc:
                out[0] = Break(total, f"corrupt gzip data ({exc})")
                return
            in_member = True
            total += len(data)
            if data:
                yield data
            if not decomp.eof:
                break
            raw, in_member = decomp.unused_data, False
            decomp = zlib.decompressobj(wbits=31)
            if raw.strip(b"\x00") == b"":  # zero padding after the last member
                raw = b""
    if in_member:
        out[0] = Break(total, "the compressed file ended before its end-of-stream marker")


def chunks(path: Path, out: list[Break | None]) -> Iterator[bytes]:
    """The file's (decompressed) bytes in chunks, after the whole-file checks."""
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise SourceFileError(f"{path}: cannot be read ({exc.strerror})") from None
    with handle:
        head = handle.read(64)
        check_head(path, head)
        handle.seek(0)
        if path.name.lower().endswith(".gz") and head:
            if not head.startswith(_GZIP_MAGIC):
                raise SourceFileError(
                    f"{path}: named .gz but not gzip-compressed (it starts with {show(head[:16])})"
                )
            first = True
            for data in _gunzip(handle, out):
                if first:
                    check_head(path, data)  # a gzipped LFS pointer is still a pointer
                    first = False
                yield data
            return
        while True:
            data = handle.read(_CHUNK)
            if not data:
                return
            yield data


class Line(NamedTuple):
    number: int  # 1-based
    offset: int  # byte offset of the line in the (decompressed) file
    raw: bytes  # without its newline
    complete: bool  # followed by a newline (a file's last line may lack one)


def lines(byte_chunks: Iterator[bytes]) -> Iterator[Line]:
    pending, offset, number = b"", 0, 0
    for chunk in byte_chunks:
        pending += chunk
        parts = pending.split(b"\n")
        pending = parts.pop()
        for part in parts:
            number += 1
            yield Line(number, offset, part, True)
            offset += len(part) + 1
    if pending:
        yield Line(number + 1, offset, pending, False)


def text_lines(path: Path, brk: list[Break | None]) -> Iterator[Line]:
    """``lines`` of a text file, with a UTF-8 byte-order mark at its start removed."""
    for number, offset, raw, complete in lines(chunks(path, brk)):
        if number == 1 and raw.startswith(BOM):
            raw, offset = raw[3:], 3
        yield Line(number, offset, raw, complete)


# --- damage records ------------------------------------------------------------------------------


def truncation(path: Path, brk: Break, where: str) -> UnparsableRecord:
    return UnparsableRecord(
        f"{path.name}: {brk.why} after {brk.offset} decompressed bytes; {where} could not be read",
        "truncated_file",
    )


def cut_tail(path: Path, what: str, why: str) -> UnparsableRecord:
    """The unreadable end of an uncompressed file that stops mid-record (no break in a stream)."""
    return UnparsableRecord(f"{path.name}: {why}; {what} could not be read", "truncated_file")


def invalid_utf8(exc: UnicodeDecodeError, offset: int, what: str) -> UnparsableRecord:
    bad = exc.object[exc.start : exc.start + 1]
    return UnparsableRecord(
        f"{what}: byte 0x{bad.hex()} at byte offset {offset + exc.start} is not UTF-8 "
        "(the file may be Latin-1/cp1252; re-save it as UTF-8)",
        "invalid_utf8",
    )


def surrogate_path(value: Any) -> str | None:
    """Where (a dotted path) a decoded JSON value holds a lone surrogate, or None; iterative."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, str):
            if SURROGATE.search(item):
                return where or "(value)"
        elif isinstance(item, dict):
            for key, sub in item.items():
                if isinstance(key, str) and SURROGATE.search(key):
                    return f"{where}.(key)" if where else "(key)"
                stack.append((f"{where}.{key}" if where else str(key), sub))
        elif isinstance(item, list):
            stack.extend((f"{where}[{i}]", sub) for i, sub in enumerate(item))
    return None


def lone_surrogate(where: str, what: str) -> UnparsableRecord:
    field = where.split(".", 1)[0].split("[", 1)[0]
    return UnparsableRecord(
        f"{what}: {where!s} holds a lone surrogate escape (e.g. \\ud800), which is not text",
        "lone_surrogate",
        field,
    )


def huge_int(what: str) -> UnparsableRecord:
    """A JSON value Python refuses to convert (an integer of thousands of digits): not a record."""
    return UnparsableRecord(
        f"{what}: holds an integer of more than {sys.get_int_max_str_digits()} digits, past Python's "
        "int-str conversion limit (no real field is that long)",
        "unparsable_record",
    )
