"""JSON Lines (``.jsonl``, optionally ``.gz``): one JSON object a line, each decoded on its own.

A last line with no newline that does not decode is a file cut mid-record (a copy or download
that stopped), not a malformed record: it becomes the ``truncated_file`` tail, as a cut ``.gz`` does.
"""

from __future__ import annotations

from pathlib import Path

from spl_hf.sources.formats.damage import (
    Break,
    Records,
    UnparsableRecord,
    cut_tail,
    invalid_utf8,
    text_lines,
    truncation,
)
from spl_hf.sources.formats.jsonvalue import decode_line


def _is_cut(record: UnparsableRecord) -> bool:
    """A record the end of the file broke off: invalid JSON, or UTF-8 that stops mid-character."""
    if record.reason == "unparsable_record":
        return "invalid JSON" in record.detail
    return record.reason == "invalid_utf8" and "unexpected end" in record.detail


def read_jsonl(path: Path, limit: int | None = None) -> Records:
    """The records of a JSON Lines file; with ``limit``, only its first records (a dry run's look)."""
    records: Records = []
    brk: list[Break | None] = [None]
    number, partial = 0, False
    for number, offset, raw, complete in text_lines(path, brk):
        if limit is not None and len(records) >= limit:
            return records  # a head: what follows (and how the file ends) is not looked at
        partial = not complete
        if not raw.strip():
            continue
        what = f"line {number}"
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            record = invalid_utf8(exc, offset, what)
            if not complete and exc.reason == "unexpected end of data":
                record = UnparsableRecord(record.detail + " (unexpected end of data)", record.reason)
            records.append(record)
            continue
        records.append(decode_line(line, what))
    last = records[-1] if records else None
    if brk[0] is not None:
        # A line cut by the break cannot parse as an object; it goes with the unreadable tail.
        if partial and isinstance(last, UnparsableRecord):
            records.pop()
        where = f"line {number if partial else number + 1} and anything after it"
        records.append(truncation(path, brk[0], where))
    elif partial and isinstance(last, UnparsableRecord) and _is_cut(last):
        records[-1] = cut_tail(
            path, f"line {number}", f"the last line has no newline and is not a whole record ({last.detail})"
        )
    return records
