"""Reading score tables and writing/reading assignments with their certificates.

Tables are parquet (``.parquet``) or JSON lines (``.jsonl``/``.ndjson``), chosen by extension. The
certificate of an assignment written to ``OUT`` is stored next to it as ``OUT.certificate.json``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.json as pajson
import pyarrow.parquet as pq

from spl_hf.assign.certificate import Certificate
from spl_hf.assign.scores import REQUIRED_COLUMNS
from spl_hf.errors import SplHfError

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


def read_table(path: str | Path, columns: tuple[str, ...] = REQUIRED_COLUMNS) -> pa.Table:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    kind = _kind(path)
    try:
        if kind == "parquet":
            present = pq.read_schema(path).names
            return pq.read_table(path, columns=[c for c in columns if c in present])
        if _blank(path):
            # An empty JSON-lines file is a valid empty table (e.g. an assignment that kept no tenet).
            return pa.table({c: pa.array([], pa.float64() if c == "score" else pa.string()) for c in columns})
        table = pajson.read_json(path)
    except pa.ArrowInvalid as exc:
        raise SplHfError(f"{path}: cannot read {kind}: {exc}") from exc
    return table.select([c for c in columns if c in table.column_names])


def _partial(path: Path) -> Path:
    # Written next to the target and renamed into place, so an interrupted run never leaves a
    # truncated file under the final name.
    return path.with_name(path.name + ".partial")


def write_table(table: pa.Table, path: str | Path) -> None:
    path = Path(path)
    kind = _kind(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _partial(path)
    if kind == "parquet":
        pq.write_table(table, tmp)
    else:
        names = table.column_names
        with tmp.open("w", encoding="utf-8") as f:
            for rec in table.to_pylist():
                f.write(json.dumps({k: rec[k] for k in names}, ensure_ascii=False) + "\n")
    os.replace(tmp, path)


def write_certificate(cert: Certificate, path: str | Path) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _partial(path)
    tmp.write_text(json.dumps(cert.to_dict(), separators=(",", ":")) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def read_certificate(path: str | Path) -> Certificate:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such certificate file")
    try:
        return Certificate.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except (json.JSONDecodeError, TypeError, KeyError) as exc:
        raise SplHfError(f"{path}: malformed certificate: {exc}") from exc
