"""The files of a build on disk: which data files the card accounts for (the manifest is :mod:`spl_hf.manifest`)."""

from __future__ import annotations

DATA_SUFFIXES = (".parquet", ".arrow")


def is_data_file(rel: str) -> bool:
    """A file the card must account for: a parquet/arrow file anywhere, or any file in a subfolder.

    >>> [is_data_file(p) for p in ("data/x.parquet", "README.md", "configs/all/rows.jsonl")]
    [True, False, True]
    """
    return rel.endswith(DATA_SUFFIXES) or "/" in rel
