"""CSV (``.csv``, optionally ``.gz``): a header, then one record a row, in a strict dialect.

The dialect is strict, so an unclosed quote cannot swallow the rows after it: the record's first
line is quarantined (``bad_csv_row``) and reading resumes on the next line. A header that names a
column twice fails the file: which of the two cells a record means by that name is unknown (a dict
of the row would keep the last one silently).
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path

from spl_hf.sources.formats.damage import (
    BOM,
    SURROGATE,
    Break,
    Line,
    Records,
    SourceFileError,
    UnparsableRecord,
    chunks,
    invalid_utf8,
    lines,
    truncation,
)

_Taken = tuple[int, int, str, UnicodeDecodeError | None]  # line number, offset, text, decode error


class _PushbackLines:
    """Decoded physical lines for the csv module, with push-back so a failed record can be re-read."""

    def __init__(self, source: Iterator[Line]) -> None:
        self._lines = source
        self._back: list[_Taken] = []
        self.taken: list[_Taken] = []
        self.last_complete = True

    def __iter__(self) -> _PushbackLines:
        return self

    def __next__(self) -> str:
        if self._back:
            item = self._back.pop()
        else:
            number, offset, raw, self.last_complete = next(self._lines)
            if number == 1 and raw.startswith(BOM):
                raw, offset = raw[3:], 3
            error = None
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                error, text = exc, raw.decode("utf-8", "surrogateescape")
            item = (number, offset, text + "\n", error)
        self.taken.append(item)
        return item[2]

    def push_back(self, items: list[_Taken]) -> None:
        self._back.extend(reversed(items))


def _check_header(path: Path, header: list[str], taken: list[_Taken]) -> None:
    bad = next(((offset, err) for _, offset, _, err in taken if err is not None), None)
    if bad is not None:
        raise SourceFileError(f"{path}: the CSV header is not UTF-8 (byte offset {bad[0] + bad[1].start})")
    first: dict[str, int] = {}
    for i, name in enumerate(header):
        if name in first:
            raise SourceFileError(
                f"{path}: the CSV header names column {name!r} twice (columns {first[name] + 1} and {i + 1}); "
                "which cell a record means by it is unknown: rename one"
            )
        first[name] = i


def _record(header: list[str], row: list[str], taken: list[_Taken]) -> dict[str, str] | UnparsableRecord:
    where = f"CSV line {taken[0][0]}" if taken else "CSV"
    bad = next(((offset, err) for _, offset, _, err in taken if err is not None), None)
    if bad is not None:
        record = invalid_utf8(bad[1], bad[0], where)
        column = next((h for h, cell in zip(header, row, strict=False) if SURROGATE.search(cell)), None)
        return UnparsableRecord(record.detail, record.reason, column)
    if len(row) != len(header):
        return UnparsableRecord(f"{where}: {len(row)} cells for {len(header)} columns", "bad_csv_row")
    return dict(zip(header, row, strict=True))


def _bad_row(path: Path, header: list[str] | None, broken: list[_Taken], exc: csv.Error) -> UnparsableRecord:
    first = broken[0][0] if broken else "?"
    if header is None:
        raise SourceFileError(f"{path}: CSV header (line {first}) is malformed ({exc})") from None
    return UnparsableRecord(
        f"CSV line {first}: {exc} (a stray or unclosed quote); the line is skipped and "
        "reading resumes on the next line",
        "bad_csv_row",
    )


def _tail(path: Path, records: Records, header: list[str] | None, brk: Break, last_complete: bool) -> None:
    if header is not None and not last_complete and not records:
        raise SourceFileError(
            f"{path}: {brk.why} after {brk.offset} decompressed bytes, before any complete CSV record"
        )
    # A cell cut by the break can still look valid, so the record holding the cut line goes too.
    if records and not last_complete:
        records.pop()
    records.append(truncation(path, brk, "the last record and anything after it"))


def read_csv(path: Path, limit: int | None = None) -> tuple[Records, tuple[str, ...]]:
    csv.field_size_limit(2**31 - 1)  # long responses exceed the 128 KiB default
    brk: list[Break | None] = [None]
    source = _PushbackLines(lines(chunks(path, brk)))
    header: list[str] | None = None
    records: Records = []
    reader = csv.reader(source, strict=True)
    while limit is None or len(records) < limit:
        source.taken = []
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            records.append(_bad_row(path, header, source.taken, exc))
            source.push_back(source.taken[1:])
            reader = csv.reader(source, strict=True)
            continue
        if not row:
            continue  # a blank line
        if header is None:
            _check_header(path, row, source.taken)
            header = row
            continue
        records.append(_record(header, row, source.taken))
    if brk[0] is not None and (limit is None or len(records) < limit):
        _tail(path, records, header, brk[0], source.last_complete)
    return records, tuple(header or ())
