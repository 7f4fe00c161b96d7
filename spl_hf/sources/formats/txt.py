"""Plain prompt lists (``.txt``, optionally ``.gz``): each non-blank line is one record ``{"prompt": line}``.

As in MaliciousInstruct's and AdvBench's official files; the line end (``\\n`` or ``\\r\\n``) and a
byte-order mark are removed, nothing else.
"""

from __future__ import annotations

from pathlib import Path

from spl_hf.sources.formats.damage import Break, Records, invalid_utf8, text_lines, truncation


def read_txt(path: Path, limit: int | None = None) -> tuple[Records, tuple[str, ...]]:
    records: Records = []
    brk: list[Break | None] = [None]
    number, partial = 0, False
    for number, offset, raw, complete in text_lines(path, brk):
        if limit is not None and len(records) >= limit:
            return records, ("prompt",)
        partial = not complete
        line = raw.removesuffix(b"\r")
        if not line.strip():
            continue
        try:
            records.append({"prompt": line.decode("utf-8")})
        except UnicodeDecodeError as exc:
            records.append(invalid_utf8(exc, offset, f"line {number}"))
    if brk[0] is not None:
        if partial and records:
            records.pop()  # the line the break cut is not a whole prompt
        records.append(
            truncation(path, brk[0], f"line {number if partial else number + 1} and anything after it")
        )
    return records, ("prompt",)
