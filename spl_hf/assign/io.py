"""Reading score tables and writing/reading assignments with their certificates.

Tables are parquet (``.parquet``) or JSON lines (``.jsonl``/``.ndjson``), chosen by extension. The
certificate of an assignment written to ``OUT`` is stored next to it as ``OUT.certificate.json``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.json as pajson
import pyarrow.parquet as pq

from spl_hf.assign.certificate import Certificate
from spl_hf.assign.scores import REQUIRED_COLUMNS
from spl_hf.errors import SplHfError
from spl_hf.files import write_json, write_jsonl, write_parquet
from spl_hf.held import hold, read_parquet

_JSONL = (".jsonl", ".ndjson")


def certificate_path(out: str | Path) -> Path:
    out = Path(out)
    return out.with_name(out.name + ".certificate.json")


def _kind(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        return "parquet"
    if suffix in _JSONL:
        return "jsonl"
    raise SplHfError(f"{path}: unsupported extension {suffix!r}; use .parquet or .jsonl")


def _blank(path: Path, probe: int = 1 << 16) -> bool:
    with path.open("rb") as f:
        return path.stat().st_size <= probe and not f.read(probe).strip()


def read_table(
    path: str | Path, columns: tuple[str, ...] = REQUIRED_COLUMNS, *, held: bool = False
) -> pa.Table:
    """``columns`` of a parquet or JSON Lines table (those it has). ``held``: string columns as
    dictionaries, as a driver holds judge scores (:mod:`spl_hf.held`); parquet decodes them straight
    into dictionaries, so no plain copy is ever made."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    kind = _kind(path)
    try:
        if kind == "parquet":
            present = pq.read_schema(path).names
            wanted = [c for c in columns if c in present]
            return read_parquet(path, wanted) if held else pq.read_table(path, columns=wanted)
        if _blank(path):
            # An empty JSON-lines file is a valid empty table (e.g. an assignment that kept no tenet).
            return pa.table({c: pa.array([], pa.float64() if c == "score" else pa.string()) for c in columns})
        table = pajson.read_json(path)
    except pa.ArrowInvalid as exc:
        raise SplHfError(f"{path}: cannot read {kind}: {exc}") from exc
    table = table.select([c for c in columns if c in table.column_names])
    return hold(table) if held else table


def read_row_groups(path: str | Path, columns: tuple[str, ...]) -> Iterator[pa.Table]:
    """``columns`` of a table file a part at a time, in row order: a parquet file's row groups (only
    one is held at a time), another file whole."""
    path = Path(path)
    if _kind(path) != "parquet":
        yield read_table(path, columns)
        return
    pf = pq.ParquetFile(path)
    for g in range(pf.num_row_groups):
        yield pf.read_row_group(g, list(columns))


def read_rows(path: str | Path, rows: np.ndarray, columns: tuple[str, ...]) -> pa.Table:
    """``columns`` of the rows ``rows`` (row numbers, in any order, repeats allowed) of a table file, in
    that order. A parquet file is read a row group and a column at a time, so only the rows taken are
    held (a build's pair texts: at the card, the 196,000 released of 334,610); another file whole."""
    path = Path(path)
    rows = np.asarray(rows, dtype=np.int64)
    if _kind(path) != "parquet":
        return read_table(path, columns).select(list(columns)).take(pa.array(rows))
    pf = pq.ParquetFile(path)
    order = np.argsort(rows, kind="stable")
    wanted = rows[order]
    back = np.empty_like(order)
    back[order] = np.arange(len(order))
    bounds = np.cumsum([0] + [pf.metadata.row_group(g).num_rows for g in range(pf.num_row_groups)])
    if len(wanted) and (wanted[0] < 0 or wanted[-1] >= bounds[-1]):
        raise IndexError(f"{path}: row numbers outside its {bounds[-1]} rows")
    cut = np.searchsorted(wanted, bounds)
    schema = pf.schema_arrow
    out = {}
    for c in columns:
        pieces = [
            pf.read_row_group(g, [c]).column(0).take(pa.array(wanted[cut[g] : cut[g + 1]] - bounds[g]))
            for g in range(pf.num_row_groups)
            if cut[g + 1] > cut[g]
        ]
        out[c] = pa.chunked_array(pieces, schema.field(c).type).take(pa.array(back))
    return pa.table(out)


def write_table(table: pa.Table, path: str | Path) -> None:
    """Write atomically (a random sibling renamed into place), so a reader never sees half a file."""
    path = Path(path)
    if _kind(path) == "jsonl":
        write_jsonl(path, table.to_pylist())  # to_pylist keeps the column order in each record
        return
    write_parquet(path, table)


def write_certificate(cert: Certificate, path: str | Path) -> None:
    write_json(path, cert.to_dict(), compact=True, ascii_only=True)


def read_certificate(path: str | Path) -> Certificate:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such certificate file")
    try:
        return Certificate.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except (json.JSONDecodeError, TypeError, KeyError) as exc:
        raise SplHfError(f"{path}: malformed certificate: {exc}") from exc
