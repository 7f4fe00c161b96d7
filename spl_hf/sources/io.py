"""Reading raw source records: local files of the Hub schema, or the Hub dataset itself.

This is the only I/O in the adapters. A path that exists, names a data file (``.jsonl``, ``.json``,
``.csv``, ``.parquet``, ``.txt``, each optionally ``.gz``; a ``.txt`` file is a plain prompt list, one
prompt a line, read as records ``{"prompt": line}`` as in MaliciousInstruct's and AdvBench's official files) or starts in an existing folder is local; only a
string shaped like ``owner/name`` that is none of these is a Hub dataset id, and it goes through
``datasets.load_dataset`` with the adapter's config/data_dir/split after a quick, retry-free check
that the Hub answers (so an offline machine fails in a second, naming the string, instead of after
half a minute of retries).

Damage is handled per record wherever the records around it are intact, and per file otherwise:

- per record (a quarantine entry, the other records kept): a JSON line or list item that is not
  valid JSON or holds an integer longer than Python converts (``unparsable_record``), nested deeper than the parser can follow (``too_deep``), holds
  bytes that are not UTF-8 (``invalid_utf8``, with the byte offset) or a lone surrogate escape such
  as ``\\ud800`` (``lone_surrogate``); a CSV record with a stray quote or the wrong number of cells
  (``bad_csv_row``; the CSV dialect is strict, so an unclosed quote cannot swallow the rows after it:
  the record's first line is quarantined and reading resumes on the next line);
- the tail of a file: a gzip stream that ends early or is corrupt keeps every complete line before
  the break and quarantines the rest as ``truncated_file`` (one entry, with the offset), so a
  truncated download never passes for a complete one; a JSON list that is never closed likewise
  (the pool reader then refuses the file unless ``accept_partial`` is set, see ``spl_hf.sources.pools``);
- the whole file (``ValueError``/``FileNotFoundError`` naming the file): missing, a directory, a Git
  LFS pointer instead of the data, a ``.gz`` that is not gzip, an unreadable parquet file, a JSON
  document that is not a list of records or an object of equal-length columns.

A UTF-8 byte-order mark at the start of any text file is ignored.
"""

from __future__ import annotations

import csv
import json
import os
import re
import sys
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from spl_hf.errors import SplHfError

DATA_SUFFIXES = (".jsonl", ".json", ".csv", ".parquet", ".txt")
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
LFS_POINTER = b"version https://git-lfs.github.com/spec/v1"
_BOM = b"\xef\xbb\xbf"
_GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 1 << 20
# A JSON text can only hold a lone surrogate through a \uXXXX escape; only such lines are walked.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class HubSpec:
    """Where a pool lives on the Hub (``datasets.load_dataset`` arguments)."""

    repo: str
    config: str | None = None
    data_dir: str | None = None
    split: str = "train"
    revision: str | None = None

    def describe(self) -> str:
        parts = [self.repo]
        if self.config:
            parts.append(f"config={self.config}")
        if self.data_dir:
            parts.append(f"data_dir={self.data_dir}")
        parts.append(f"split={self.split}")
        if self.revision:
            parts.append(f"revision={self.revision}")
        return " ".join(parts)


@dataclass(frozen=True)
class UnparsableRecord:
    """A record slot whose bytes could not be decoded into a mapping (kept so it is reported)."""

    detail: str
    reason: str = "unparsable_record"
    field: str | None = None


class RawTable(NamedTuple):
    records: list[dict[str, Any] | UnparsableRecord]
    columns: tuple[str, ...]  # every column seen, in order of first appearance
    origin: str


Records = list[dict[str, Any] | UnparsableRecord]


def _data_suffix(path: Path) -> str | None:
    name = path.name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    for suffix in DATA_SUFFIXES:
        if name.endswith(suffix):
            return suffix
    return None


def is_hub_id(path_or_repo: str) -> bool:
    """Whether a string is read as a Hub dataset id rather than a local path (see the module doc)."""
    path = Path(path_or_repo)
    if path.exists() or _data_suffix(path) is not None or not _HUB_ID.match(path_or_repo):
        return False
    return not Path(path_or_repo.split("/", 1)[0]).is_dir()  # "data/x" with a data/ folder is a path


def _columns(records: Records) -> tuple[str, ...]:
    seen: dict[str, Any] = {}
    for record in records:
        if isinstance(record, dict):
            seen.update(record)  # only the keys are used: new ones go last, known ones stay put
    return tuple(seen)


def _show(value: object, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- bytes ------------------------------------------------------------------------------------


class _Break(NamedTuple):
    """Where a compressed stream stopped being readable (after `offset` decompressed bytes)."""

    offset: int
    why: str


def _check_head(path: Path, head: bytes) -> None:
    if head.startswith(LFS_POINTER):
        raise SplHfError(
            f"{path}: Git LFS pointer, not the data: run git lfs pull in the clone it came from "
            "(or download the file itself)"
        )


def _gunzip(path: Path, handle: Any, out: list[_Break | None]) -> Iterator[bytes]:
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
                out[0] = _Break(total, f"corrupt gzip data ({exc})")
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
        out[0] = _Break(total, "the compressed file ended before its end-of-stream marker")


def _chunks(path: Path, out: list[_Break | None]) -> Iterator[bytes]:
    """The file's (decompressed) bytes in chunks, after the whole-file checks."""
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise SplHfError(f"{path}: cannot be read ({exc.strerror})") from None
    with handle:
        head = handle.read(64)
        _check_head(path, head)
        handle.seek(0)
        if path.name.lower().endswith(".gz") and head:
            if not head.startswith(_GZIP_MAGIC):
                raise SplHfError(
                    f"{path}: named .gz but not gzip-compressed (it starts with {_show(head[:16])})"
                )
            first = True
            for data in _gunzip(path, handle, out):
                if first:
                    _check_head(path, data)  # a gzipped LFS pointer is still a pointer
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


def _lines(chunks: Iterator[bytes]) -> Iterator[Line]:
    pending, offset, number = b"", 0, 0
    for chunk in chunks:
        pending += chunk
        parts = pending.split(b"\n")
        pending = parts.pop()
        for part in parts:
            number += 1
            yield Line(number, offset, part, True)
            offset += len(part) + 1
    if pending:
        yield Line(number + 1, offset, pending, False)


def _truncation(path: Path, brk: _Break, where: str) -> UnparsableRecord:
    return UnparsableRecord(
        f"{path.name}: {brk.why} after {brk.offset} decompressed bytes; {where} could not be read",
        "truncated_file",
    )


def _invalid_utf8(exc: UnicodeDecodeError, offset: int, what: str) -> UnparsableRecord:
    bad = exc.object[exc.start : exc.start + 1]
    return UnparsableRecord(
        f"{what}: byte 0x{bad.hex()} at byte offset {offset + exc.start} is not UTF-8 "
        "(the file may be Latin-1/cp1252; re-save it as UTF-8)",
        "invalid_utf8",
    )


def _surrogate_path(value: Any) -> str | None:
    """Where (a dotted path) a decoded JSON value holds a lone surrogate, or None; iterative."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return where or "(value)"
        elif isinstance(item, dict):
            for key, sub in item.items():
                if isinstance(key, str) and _SURROGATE.search(key):
                    return f"{where}.(key)" if where else "(key)"
                stack.append((f"{where}.{key}" if where else str(key), sub))
        elif isinstance(item, list):
            stack.extend((f"{where}[{i}]", sub) for i, sub in enumerate(item))
    return None


def _json_record(value: Any, what: str) -> dict[str, Any] | UnparsableRecord:
    if not isinstance(value, dict):
        return UnparsableRecord(f"{what}: a JSON {type(value).__name__}, not an object")
    return value


def _huge_int(what: str, exc: ValueError) -> UnparsableRecord:
    """A JSON value Python refuses to convert (an integer of thousands of digits): not a record."""
    return UnparsableRecord(
        f"{what}: holds an integer of more than {sys.get_int_max_str_digits()} digits, past Python's "
        "int-str conversion limit (no real field is that long)",
        "unparsable_record",
    )


def _lone_surrogate(where: str, what: str) -> UnparsableRecord:
    field = where.split(".", 1)[0].split("[", 1)[0]
    return UnparsableRecord(
        f"{what}: {where!s} holds a lone surrogate escape (e.g. \\ud800), which is not text",
        "lone_surrogate",
        field,
    )


# --- formats ----------------------------------------------------------------------------------


def _text_lines(path: Path, brk: list[_Break | None]) -> Iterator[tuple[int, int, bytes, bool]]:
    """``_lines`` of a text file, with a UTF-8 byte-order mark at its start removed."""
    for number, offset, raw, complete in _lines(_chunks(path, brk)):
        if number == 1 and raw.startswith(_BOM):
            raw, offset = raw[3:], 3
        yield number, offset, raw, complete


def _read_jsonl(path: Path) -> Records:
    records: Records = []
    brk: list[_Break | None] = [None]
    number, partial = 0, False
    for number, offset, raw, complete in _text_lines(path, brk):
        partial = not complete
        if not raw.strip():
            continue
        what = f"line {number}"
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            records.append(_invalid_utf8(exc, offset, what))
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            records.append(UnparsableRecord(f"{what}: invalid JSON ({exc.msg})"))
            continue
        except RecursionError:
            records.append(UnparsableRecord(f"{what}: JSON nested too deeply to read", "too_deep"))
            continue
        except ValueError as exc:  # an integer past Python's int-str conversion limit
            records.append(_huge_int(what, exc))
            continue
        if _SURROGATE_ESCAPE.search(line):
            where = _surrogate_path(value)
            if where is not None:
                records.append(_lone_surrogate(where, what))
                continue
        records.append(_json_record(value, what))
    if brk[0] is not None:
        # A line cut by the break cannot parse as an object; it goes with the unreadable tail.
        if partial and records and isinstance(records[-1], UnparsableRecord):
            records.pop()
        records.append(
            _truncation(path, brk[0], f"line {number if partial else number + 1} and anything after it")
        )
    return records


_STRUCTURE = re.compile(r'["\\\[\]{},]')


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


_WS = re.compile(r"[ \t\n\r]*")


def _skip_ws(text: str, pos: int) -> int:
    return _WS.match(text, pos).end()  # type: ignore[union-attr]


def _byte_offset(text: str, pos: int) -> int:
    return len(text[:pos].encode("utf-8", "surrogateescape"))


def _json_items(path: Path, text: str, brk: _Break | None) -> Records:
    """The items of a top-level JSON list, each parsed on its own so one bad item costs only itself."""
    decoder = json.JSONDecoder()
    records: Records = []
    pos = _skip_ws(text, 1)
    closed = pos < len(text) and text[pos] == "]"
    if closed:
        pos += 1
    while not closed and pos < len(text):
        what = f"item {len(records)}"
        start = pos
        record: dict[str, Any] | UnparsableRecord
        try:
            value, pos = decoder.raw_decode(text, pos)
            record = _json_record(value, what)
        except json.JSONDecodeError as exc:
            pos = _value_end(text, start)
            record = UnparsableRecord(f"{what}: invalid JSON ({exc.msg})")
        except RecursionError:
            pos = _value_end(text, start)
            record = UnparsableRecord(f"{what}: JSON nested too deeply to read", "too_deep")
        except ValueError as exc:  # an integer past Python's int-str conversion limit
            pos = _value_end(text, start)
            record = _huge_int(what, exc)
        raw = text[start:pos]
        if isinstance(record, dict) and (_SURROGATE_ESCAPE.search(raw) or _SURROGATE.search(raw)):
            bad_byte = _SURROGATE.search(raw)
            if bad_byte and "\udc80" <= bad_byte.group() <= "\udcff":
                offset = _byte_offset(text, start + bad_byte.start())
                byte = ord(bad_byte.group()) - 0xDC00
                record = UnparsableRecord(
                    f"{what}: byte 0x{byte:02x} at byte offset {offset} is not UTF-8 "
                    "(the file may be Latin-1/cp1252; re-save it as UTF-8)",
                    "invalid_utf8",
                )
            else:
                where = _surrogate_path(record)
                if where is not None:
                    record = _lone_surrogate(where, what)
        records.append(record)
        pos = _skip_ws(text, pos)
        if pos >= len(text):
            break
        if text[pos] == ",":
            pos = _skip_ws(text, pos + 1)
        elif text[pos] == "]":
            closed, pos = True, pos + 1
        else:
            raise SplHfError(
                f"{path}: invalid JSON list: expected ',' or ']' after {what} at byte offset {_byte_offset(text, pos)}"
            )
    if not closed:
        if records and isinstance(records[-1], UnparsableRecord):
            records.pop()  # the item the file breaks off in (a cut object cannot parse)
        where = f"item {len(records)} and anything after it"
        if brk is not None:
            records.append(_truncation(path, brk, where))
        else:
            records.append(
                UnparsableRecord(
                    f"{path.name}: the file ends before the JSON list is closed (truncated?); {where} could not be read",
                    "truncated_file",
                )
            )
    elif _skip_ws(text, pos) < len(text):
        raise SplHfError(
            f"{path}: invalid JSON: data after the closing ']' at byte offset {_byte_offset(text, pos)}"
        )
    return records


def _read_json(path: Path) -> Records:
    brk: list[_Break | None] = [None]
    data = b"".join(_chunks(path, brk))
    if data.startswith(_BOM):
        data = data[3:]
    # Undecodable bytes become lone surrogates, so the item holding them is found and quarantined.
    text = data.decode("utf-8", "surrogateescape")
    start = _skip_ws(text, 0)
    if start >= len(text):
        if brk[0] is not None:
            return [_truncation(path, brk[0], "the whole file")]
        return []
    if text[start] == "[":
        return _json_items(path, text[start:], brk[0])
    if brk[0] is not None:
        raise SplHfError(f"{path}: {brk[0].why} after {brk[0].offset} decompressed bytes")
    if _SURROGATE.search(text):
        at = _SURROGATE.search(text)
        assert at is not None
        raise SplHfError(f"{path}: byte offset {_byte_offset(text, at.start())} is not UTF-8")
    try:
        data_obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SplHfError(f"{path}: invalid JSON ({exc})") from None
    except RecursionError:
        raise SplHfError(f"{path}: JSON nested too deeply to read") from None
    except ValueError as exc:  # an integer past Python's int-str conversion limit
        raise SplHfError(f"{path}: {_huge_int('the JSON document', exc).detail}") from None
    if isinstance(data_obj, dict) and data_obj and all(isinstance(v, list) for v in data_obj.values()):
        lengths = {len(v) for v in data_obj.values()}
        if len(lengths) != 1:
            raise SplHfError(f"{path}: columnar JSON with columns of different lengths {sorted(lengths)}")
        keys = list(data_obj)
        return [dict(zip(keys, values, strict=True)) for values in zip(*data_obj.values(), strict=True)]
    raise SplHfError(f"{path}: expected a JSON list of records or an object of equal-length columns")


class _PushbackLines:
    """Decoded physical lines for the csv module, with push-back so a failed record can be re-read."""

    def __init__(self, lines: Iterator[Line]) -> None:
        self._lines = lines
        self._back: list[tuple[int, int, str, UnicodeDecodeError | None]] = []
        self.taken: list[tuple[int, int, str, UnicodeDecodeError | None]] = []
        self.last_complete = True

    def __iter__(self) -> _PushbackLines:
        return self

    def __next__(self) -> str:
        if self._back:
            item = self._back.pop()
        else:
            number, offset, raw, self.last_complete = next(self._lines)
            if number == 1 and raw.startswith(_BOM):
                raw, offset = raw[3:], 3
            error = None
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                error, text = exc, raw.decode("utf-8", "surrogateescape")
            item = (number, offset, text + "\n", error)
        self.taken.append(item)
        return item[2]

    def push_back(self, items: list[tuple[int, int, str, UnicodeDecodeError | None]]) -> None:
        self._back.extend(reversed(items))


def _read_csv(path: Path) -> tuple[Records, tuple[str, ...]]:
    csv.field_size_limit(2**31 - 1)  # long responses exceed the 128 KiB default
    brk: list[_Break | None] = [None]
    lines = _PushbackLines(_lines(_chunks(path, brk)))
    header: list[str] | None = None
    records: Records = []
    reader = csv.reader(lines, strict=True)
    while True:
        lines.taken = []
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            broken = lines.taken
            first = broken[0][0] if broken else "?"
            if header is None:
                raise SplHfError(f"{path}: CSV header (line {first}) is malformed ({exc})") from None
            records.append(
                UnparsableRecord(
                    f"CSV line {first}: {exc} (a stray or unclosed quote); the line is skipped and "
                    "reading resumes on the next line",
                    "bad_csv_row",
                )
            )
            lines.push_back(broken[1:])
            reader = csv.reader(lines, strict=True)
            continue
        if not row:
            continue  # a blank line
        taken = lines.taken
        where = f"CSV line {taken[0][0]}" if taken else "CSV"
        bad = next(((offset, err) for _, offset, _, err in taken if err is not None), None)
        if header is None:
            if bad is not None:
                raise SplHfError(f"{path}: the CSV header is not UTF-8 (byte offset {bad[0] + bad[1].start})")
            header = row
            continue
        if bad is not None:
            record = _invalid_utf8(bad[1], bad[0], where)
            column = next((h for h, cell in zip(header, row, strict=False) if _SURROGATE.search(cell)), None)
            records.append(UnparsableRecord(record.detail, record.reason, column))
        elif len(row) != len(header):
            records.append(
                UnparsableRecord(f"{where}: {len(row)} cells for {len(header)} columns", "bad_csv_row")
            )
        else:
            records.append(dict(zip(header, row, strict=True)))
    if brk[0] is not None and header is not None and not lines.last_complete and not records:
        raise SplHfError(
            f"{path}: {brk[0].why} after {brk[0].offset} decompressed bytes, before any complete CSV record"
        )
    if brk[0] is not None:
        # A cell cut by the break can still look valid, so the record holding the cut line goes too.
        if records and not lines.last_complete:
            records.pop()
        records.append(_truncation(path, brk[0], "the last record and anything after it"))
    return records, tuple(header or ())


def _read_txt(path: Path) -> tuple[Records, tuple[str, ...]]:
    """A plain prompt list: each non-blank line is one record ``{"prompt": line}`` (line end and a BOM removed)."""
    records: Records = []
    brk: list[_Break | None] = [None]
    number, partial = 0, False
    for number, offset, raw, complete in _text_lines(path, brk):
        partial = not complete
        raw = raw.removesuffix(b"\r")
        if not raw.strip():
            continue
        try:
            records.append({"prompt": raw.decode("utf-8")})
        except UnicodeDecodeError as exc:
            records.append(_invalid_utf8(exc, offset, f"line {number}"))
    if brk[0] is not None:
        if partial and records:
            records.pop()  # the line the break cut is not a whole prompt
        records.append(
            _truncation(path, brk[0], f"line {number if partial else number + 1} and anything after it")
        )
    return records, ("prompt",)


def _read_parquet(path: Path) -> Records:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        with path.open("rb") as handle:
            _check_head(path, handle.read(64))
        table = pq.read_table(path)
    except (pa.ArrowException, OSError) as exc:
        raise SplHfError(f"{path}: not a readable parquet file ({exc})") from None
    try:
        return list(table.to_pylist())
    except (pa.ArrowException, UnicodeDecodeError) as exc:
        raise SplHfError(f"{path}: parquet values cannot be read ({exc})") from None


def read_local(path: str | Path) -> RawTable:
    path = Path(path)
    if path.is_dir():
        raise SplHfError(
            f"{path}: is a directory; expected a data file ({', '.join(DATA_SUFFIXES)}, optionally .gz)"
        )
    suffix = _data_suffix(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    if suffix is None:
        raise SplHfError(f"{path}: unsupported file type (use {', '.join(DATA_SUFFIXES)}, optionally .gz)")
    if not path.is_file():
        raise SplHfError(f"{path}: not a regular file")
    if suffix == ".parquet" and path.name.lower().endswith(".gz"):
        raise SplHfError(f"{path}: gzipped parquet is not supported (parquet is compressed already)")
    if path.stat().st_size == 0:
        return RawTable([], (), str(path))  # an empty file of any format holds no records
    if suffix == ".csv":
        records, header = _read_csv(path)
        return RawTable(records, header or _columns(records), str(path))
    if suffix == ".txt":
        records, header = _read_txt(path)
        return RawTable(records, header, str(path))
    if suffix == ".parquet":
        records = _read_parquet(path)
    elif suffix == ".json":
        records = _read_json(path)
    else:
        records = _read_jsonl(path)
    return RawTable(records, _columns(records), str(path))


# --- the Hub ----------------------------------------------------------------------------------


def _offline() -> bool:
    return any(
        os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")
        for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")
    )


def probe_hub(spec: HubSpec) -> None:
    """Fail fast (one request, no retries) when the Hub dataset is unreachable or does not exist."""
    from huggingface_hub import HfApi
    from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError, RevisionNotFoundError

    try:
        HfApi().dataset_info(spec.repo, revision=spec.revision, timeout=10)
    except RepositoryNotFoundError:
        raise FileNotFoundError(
            f"{spec.repo}: no such local file, and no Hub dataset of that name (or it is private)"
        ) from None
    except RevisionNotFoundError:
        raise SplHfError(f"{spec.repo}: the Hub dataset has no revision {spec.revision!r}") from None
    except HfHubHTTPError as exc:
        raise SplHfError(f"{spec.repo}: the Hub refused the dataset ({exc})") from None
    except Exception as exc:  # network failures come from several HTTP stacks
        raise SplHfError(
            f"{spec.repo}: no such local file, and the Hub could not be reached to read it as a dataset id "
            f"({type(exc).__name__}: {exc}); set HF_HUB_OFFLINE=1 to read a cached copy"
        ) from None


def read_hub(spec: HubSpec) -> RawTable:
    if not _offline():
        probe_hub(spec)
    from datasets import load_dataset

    try:
        ds = load_dataset(
            spec.repo, spec.config, data_dir=spec.data_dir, split=spec.split, revision=spec.revision
        )
    except Exception as exc:  # a Hub read fails in many library-specific ways; name the dataset
        hint = " (offline, and not in the local cache)" if _offline() else ""
        raise SplHfError(
            f"{spec.repo}: no such local file; as the Hub dataset hf://datasets/{spec.describe()} it cannot "
            f"be loaded{hint} ({type(exc).__name__}: {exc})"
        ) from exc
    return RawTable(ds.to_list(), tuple(ds.column_names), f"hf://datasets/{spec.describe()}")


def read_table(path_or_repo: str | Path, hub: HubSpec) -> RawTable:
    """Read ``path_or_repo``: a local file, or the Hub dataset ``hub`` when it is that repo's id."""
    text = str(path_or_repo)
    if is_hub_id(text):
        if text != hub.repo:
            # A different repo id is allowed (mirrors, forks) but keeps the adapter's config/split.
            hub = HubSpec(text, hub.config, hub.data_dir, hub.split, hub.revision)
        return read_hub(hub)
    return read_local(text)
