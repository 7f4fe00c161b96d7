"""Row files at the edges: read parquet/jsonl rows, write them deterministically and atomically."""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from spl_hf.errors import SplHfError


def require_columns(rows: Sequence[dict[str, Any]], columns: Sequence[str], path: str | Path) -> None:
    for i, row in enumerate(rows):
        missing = [c for c in columns if c not in row]
        if missing:
            raise SplHfError(f"{path}: row {i} lacks column(s) {', '.join(missing)}")


def _temp_beside(path: Path) -> Path:
    """A new empty hidden sibling, created with mode 0666 minus the umask (mkstemp would give 0600)."""
    while True:
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.partial")
        try:
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            return tmp
        except FileExistsError:
            continue


def write_rows(path: str | Path, rows: Sequence[dict[str, Any]]) -> None:
    """Write via a temporary file and rename, so readers never see a half-written output.

    The caller checks the path first (:func:`spl_hf.outputs.guard_file`).
    """
    path = Path(path)
    if path.suffix not in (".parquet", ".jsonl", ".json"):
        raise SplHfError(f"{path}: unsupported output type (use .parquet or .jsonl)")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _temp_beside(path)
    try:
        if path.suffix == ".parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            pq.write_table(pa.Table.from_pylist(list(rows)), tmp)
        elif path.suffix in (".jsonl", ".json"):
            with open(tmp, "w") as fh:
                for row in rows:
                    fh.write(json.dumps(row, ensure_ascii=False, sort_keys=False) + "\n")
        else:
            raise SplHfError(f"{path}: unsupported output type (use .parquet or .jsonl)")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
