"""Reading row files (JSON Lines or parquet) at the edges: a neutral I/O module that pure layers
such as ``derive`` may use without importing model code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from spl_hf.errors import SplHfError

LFS_POINTER = b"version https://git-lfs.github.com/spec/"


def read_rows(
    path: str | Path, limit: int | None = None, line_key: str | None = None
) -> list[dict[str, Any]]:
    """Rows of a parquet or JSON Lines file; a bad line raises naming file and line.

    With ``line_key``, each JSON Lines row also records its 1-based line number under that key,
    so later validation errors can point at the line.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file" if not path.exists() else f"{path}: not a file")
    with path.open("rb") as fh:
        if fh.read(len(LFS_POINTER)) == LFS_POINTER:
            raise SplHfError(
                f"{path}: a Git LFS pointer, not the data (run `git lfs pull` in its repository)"
            )
    if path.suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            table = pq.read_table(path)
        except pa.ArrowException as exc:
            raise SplHfError(f"{path}: cannot read parquet ({exc})") from None
        if limit is not None:
            table = table.slice(0, limit)
        return table.to_pylist()
    if path.suffix in (".jsonl", ".json"):
        rows = []
        with path.open("rb") as fh:
            for n, raw in enumerate(fh, 1):
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise SplHfError(
                        f"{path}:{n}: not valid UTF-8 ({exc.reason} at byte {exc.start})"
                    ) from None
                if limit is not None and len(rows) >= limit:
                    break
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise SplHfError(f"{path}:{n}: not valid JSON ({exc.msg})") from None
                if not isinstance(row, dict):
                    raise SplHfError(f"{path}:{n}: expected a JSON object per line")
                if line_key:
                    row[line_key] = n
                rows.append(row)
        return rows
    raise SplHfError(f"{path}: unsupported file type (use .parquet or .jsonl)")
