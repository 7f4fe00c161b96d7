"""Row files at the edges: read parquet/jsonl rows, write them deterministically and atomically."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from spl_hf.errors import SplHfError
from spl_hf.files import write_jsonl, write_parquet


def require_columns(rows: Sequence[dict[str, Any]], columns: Sequence[str], path: str | Path) -> None:
    for i, row in enumerate(rows):
        missing = [c for c in columns if c not in row]
        if missing:
            raise SplHfError(f"{path}: row {i} lacks column(s) {', '.join(missing)}")


def write_rows(path: str | Path, rows: Sequence[dict[str, Any]]) -> None:
    """Write via a temporary file and rename, so readers never see a half-written output.

    The caller checks the path first (:func:`spl_hf.outputs.guard_file`).
    """
    path = Path(path)
    if path.suffix not in (".parquet", ".jsonl", ".json"):
        raise SplHfError(f"{path}: unsupported output type (use .parquet or .jsonl)")
    if path.suffix != ".parquet":
        write_jsonl(path, rows)
        return
    import pyarrow as pa

    write_parquet(path, pa.Table.from_pylist(list(rows)))
