"""Reading raw source records: local files of the Hub schema, or the Hub dataset itself.

This is the only I/O in the adapters. A local path is read when it exists or names a data file
(``.jsonl``, ``.json``, ``.csv``, ``.parquet``, each optionally ``.gz``); anything else of the form
``owner/name`` is a Hub dataset id and goes through ``datasets.load_dataset`` with the adapter's
config/data_dir/split. The Hub is only contacted when the caller passes a Hub id.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

DATA_SUFFIXES = (".jsonl", ".json", ".csv", ".parquet")
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


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
    """A record slot whose text could not be decoded into a mapping (kept so it is reported)."""

    detail: str


class RawTable(NamedTuple):
    records: list[dict[str, Any] | UnparsableRecord]
    columns: tuple[str, ...]  # every column seen, in order of first appearance
    origin: str


def _data_suffix(path: Path) -> str | None:
    name = path.name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    for suffix in DATA_SUFFIXES:
        if name.endswith(suffix):
            return suffix
    return None


def is_hub_id(path_or_repo: str) -> bool:
    path = Path(path_or_repo)
    return not path.exists() and _data_suffix(path) is None and bool(_HUB_ID.match(path_or_repo))


def _columns(records: Iterable[Any]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for record in records:
        if isinstance(record, dict):
            seen.update(dict.fromkeys(record))
    return tuple(seen)


def _open_text(path: Path, encoding: str = "utf-8") -> io.TextIOBase:
    if path.name.lower().endswith(".gz"):
        return gzip.open(path, "rt", encoding=encoding, newline="")  # type: ignore[return-value]
    return path.open("r", encoding=encoding, newline="")


def _read_jsonl(path: Path) -> list[dict[str, Any] | UnparsableRecord]:
    records: list[dict[str, Any] | UnparsableRecord] = []
    with _open_text(path) as handle:
        for line_no, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                records.append(UnparsableRecord(f"line {line_no}: invalid JSON ({exc.msg})"))
                continue
            if isinstance(value, dict):
                records.append(value)
            else:
                records.append(
                    UnparsableRecord(f"line {line_no}: a JSON {type(value).__name__}, not an object")
                )
    return records


def _read_json(path: Path) -> list[dict[str, Any] | UnparsableRecord]:
    with _open_text(path) as handle:
        try:
            data = json.load(handle)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: invalid JSON ({exc})") from None
    if isinstance(data, list):
        return [
            r
            if isinstance(r, dict)
            else UnparsableRecord(f"item {i}: a JSON {type(r).__name__}, not an object")
            for i, r in enumerate(data)
        ]
    if isinstance(data, dict) and data and all(isinstance(v, list) for v in data.values()):
        lengths = {len(v) for v in data.values()}
        if len(lengths) != 1:
            raise ValueError(f"{path}: columnar JSON with columns of different lengths {sorted(lengths)}")
        keys = list(data)
        return [dict(zip(keys, values, strict=True)) for values in zip(*data.values(), strict=True)]
    raise ValueError(f"{path}: expected a JSON list of records or an object of equal-length columns")


def _read_csv(path: Path) -> list[dict[str, Any] | UnparsableRecord]:
    csv.field_size_limit(2**31 - 1)  # long responses exceed the 128 KiB default
    with _open_text(path, "utf-8-sig") as handle:  # spreadsheet exports start with a BOM
        reader = csv.DictReader(handle)
        records: list[dict[str, Any] | UnparsableRecord] = []
        for row in reader:
            if None in row:  # more cells than header columns
                records.append(UnparsableRecord(f"CSV line {reader.line_num}: more cells than columns"))
            else:
                records.append(dict(row))
        return records


def _read_parquet(path: Path) -> list[dict[str, Any] | UnparsableRecord]:
    import pyarrow.parquet as pq

    return list(pq.read_table(path).to_pylist())


_READERS = {".jsonl": _read_jsonl, ".json": _read_json, ".csv": _read_csv, ".parquet": _read_parquet}


def read_local(path: str | Path) -> RawTable:
    path = Path(path)
    suffix = _data_suffix(path)
    if suffix is None:
        raise ValueError(f"{path}: unsupported file type (use {', '.join(DATA_SUFFIXES)}, optionally .gz)")
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    if suffix == ".parquet" and path.name.lower().endswith(".gz"):
        raise ValueError(f"{path}: gzipped parquet is not supported (parquet is compressed already)")
    records = _READERS[suffix](path)
    columns = _columns(records)
    if suffix == ".csv" and not records:
        with _open_text(path, "utf-8-sig") as handle:
            columns = tuple(next(csv.reader(handle), []))
    return RawTable(records, columns, str(path))


def read_hub(spec: HubSpec) -> RawTable:
    from datasets import load_dataset

    ds = load_dataset(
        spec.repo, spec.config, data_dir=spec.data_dir, split=spec.split, revision=spec.revision
    )
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
