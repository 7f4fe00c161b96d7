"""One reader per source file format, as ``datasets``' packaged modules are: ``jsonl``, ``json_file``,
``csv_file``, ``txt`` and ``parquet``, sharing :mod:`~spl_hf.sources.formats.damage` (the byte and
line streams, and what is quarantined per record or fails the file). :func:`read_local` picks the
reader from the file name and applies the checks every format shares.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from spl_hf.sources.formats.csv_file import read_csv
from spl_hf.sources.formats.damage import RawTable, Records, SourceFileError, columns_of
from spl_hf.sources.formats.json_file import read_json
from spl_hf.sources.formats.jsonl import read_jsonl
from spl_hf.sources.formats.parquet import read_parquet
from spl_hf.sources.formats.txt import read_txt

DATA_SUFFIXES = (".jsonl", ".json", ".csv", ".parquet", ".txt")

# suffix -> reader giving the records and, for headed formats, the header (else the keys seen)
_READERS: dict[str, Callable[[Path, int | None], Records | tuple[Records, tuple[str, ...]]]] = {
    ".jsonl": read_jsonl,
    ".json": read_json,
    ".csv": read_csv,
    ".parquet": read_parquet,
    ".txt": read_txt,
}


def data_suffix(path: Path) -> str | None:
    """The data format a file name says (``x.csv.gz`` is ``.csv``), or None."""
    name = path.name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    for suffix in DATA_SUFFIXES:
        if name.endswith(suffix):
            return suffix
    return None


def _check_file(path: Path) -> str:
    """The file's format, after refusing what no format reads (naming the file)."""
    if path.is_dir():
        raise SourceFileError(
            f"{path}: is a directory; expected a data file ({', '.join(DATA_SUFFIXES)}, optionally .gz)"
        )
    suffix = data_suffix(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    if suffix is None:
        raise SourceFileError(
            f"{path}: unsupported file type (use {', '.join(DATA_SUFFIXES)}, optionally .gz)"
        )
    if not path.is_file():
        raise SourceFileError(f"{path}: not a regular file")
    if suffix == ".parquet" and path.name.lower().endswith(".gz"):
        raise SourceFileError(f"{path}: gzipped parquet is not supported (parquet is compressed already)")
    return suffix


def read_local(path: str | Path, limit: int | None = None) -> RawTable:
    """A local data file's records; with ``limit``, only its first records (how the file ends is not
    checked then: a dry run looks at the head, the real read at the whole file)."""
    path = Path(path)
    suffix = _check_file(path)
    if path.stat().st_size == 0:
        return RawTable([], (), str(path))  # an empty file of any format holds no records
    out = _READERS[suffix](path, limit)
    if isinstance(out, tuple):
        records, header = out
        return RawTable(records, header or columns_of(records), str(path))
    return RawTable(out, columns_of(out), str(path))


__all__ = ["DATA_SUFFIXES", "data_suffix", "read_local"]
