"""Row files at the edges: read parquet/jsonl rows, write them deterministically and atomically."""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Sequence
from pathlib import Path
from typing import Any

LFS_POINTER = b"version https://git-lfs.github.com/spec/"


def read_rows(path: str | Path, limit: int | None = None, line_key: str | None = None) -> list[dict[str, Any]]:
    """Rows of a parquet or JSON Lines file; a bad line raises naming file and line.

    With ``line_key``, each JSON Lines row also records its 1-based line number under that key,
    so later validation errors can point at the line.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file" if not path.exists() else f"{path}: not a file")
    with path.open("rb") as fh:
        if fh.read(len(LFS_POINTER)) == LFS_POINTER:
            raise ValueError(f"{path}: a Git LFS pointer, not the data (run `git lfs pull` in its repository)")
    if path.suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            table = pq.read_table(path)
        except pa.ArrowException as exc:
            raise ValueError(f"{path}: cannot read parquet ({exc})") from None
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
                    raise ValueError(f"{path}:{n}: not valid UTF-8 ({exc.reason} at byte {exc.start})") from None
                if limit is not None and len(rows) >= limit:
                    break
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ValueError(f"{path}:{n}: not valid JSON ({exc.msg})") from None
                if not isinstance(row, dict):
                    raise ValueError(f"{path}:{n}: expected a JSON object per line")
                if line_key:
                    row[line_key] = n
                rows.append(row)
        return rows
    raise ValueError(f"{path}: unsupported file type (use .parquet or .jsonl)")


def require_columns(rows: Sequence[dict[str, Any]], columns: Sequence[str], path: str | Path) -> None:
    for i, row in enumerate(rows):
        missing = [c for c in columns if c not in row]
        if missing:
            raise ValueError(f"{path}: row {i} lacks column(s) {', '.join(missing)}")


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
        raise ValueError(f"{path}: unsupported output type (use .parquet or .jsonl)")
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
            raise ValueError(f"{path}: unsupported output type (use .parquet or .jsonl)")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
