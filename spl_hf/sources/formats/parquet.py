"""Parquet (``.parquet``; never ``.gz``, parquet is compressed already): read whole with pyarrow.

Parquet carries its own checksums and footer, so damage is to the whole file: unreadable, values
that do not decode, or a schema that names a column twice (which one a record means is unknown).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from spl_hf.sources.formats.damage import Records, SourceFileError, check_head


def read_parquet(path: Path, limit: int | None = None) -> Records:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        with path.open("rb") as handle:
            check_head(path, handle.read(64))
        names = pq.read_schema(path).names
        twice = [name for name, n in Counter(names).items() if n > 1]
        if twice:
            raise SourceFileError(
                f"{path}: the parquet schema names column {twice[0]!r} twice; which one a record means is "
                "unknown: rename one"
            )
        table = pq.read_table(path) if limit is None else _head(pq.ParquetFile(path), limit)
    except (pa.ArrowException, OSError) as exc:
        reason = " ".join(str(exc).split())  # Arrow's messages span lines
        raise SourceFileError(f"{path}: not a readable parquet file ({reason})") from None
    try:
        return list(table.to_pylist())
    except (pa.ArrowException, UnicodeDecodeError) as exc:
        raise SourceFileError(
            f"{path}: parquet values cannot be read ({' '.join(str(exc).split())})"
        ) from None


def _head(parquet: Any, limit: int) -> Any:
    """The first ``limit`` rows, reading only the first batch (a dry run's look at a large file)."""
    import pyarrow as pa

    batch = next(parquet.iter_batches(batch_size=limit), None)
    return pa.Table.from_batches([batch]) if batch is not None else parquet.schema_arrow.empty_table()
