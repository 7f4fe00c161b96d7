"""Joins of a tenet build's tables on their keys: which pair row each judged or assigned row is.

Shared by the build and its judge-quality section (:mod:`spl_hf.build.judge_quality`), which the
release also computes before any assignment; neither imports the other for it.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from spl_hf.contract import SCORE_FEATURES
from spl_hf.errors import SplHfError
from spl_hf.held import hold, key_codes


def row_numbers(keys: pa.Table, table: pa.Table, on: list[str], missing: str) -> pa.Array:
    """For each row of ``keys``, the row of ``table`` with the same ``on`` values (an Arrow join, in key order)."""
    key_side, table_side = _join_keys(keys, table, on)
    found = _hash_lookup(key_side, table_side, on)
    if found is not None:
        return found
    # The join defines the result and its errors (repeated or absent keys, null keys).
    left = key_side.append_column("__key_row", pa.array(np.arange(keys.num_rows, dtype=np.int64)))
    right = table_side.append_column("__row", pa.array(np.arange(table.num_rows, dtype=np.int64)))
    joined = left.join(right, on, join_type="left outer").sort_by("__key_row")
    if joined.num_rows != keys.num_rows:
        raise SplHfError(f"{' and '.join(on)} repeat in a table that must hold each once")
    rows = joined.column("__row").combine_chunks()
    if rows.null_count:
        absent_rows = joined.filter(pc.is_null(joined.column("__row"))).column("__key_row").slice(0, 5)
        raise SplHfError(f"{missing}: {keys.select(on).take(absent_rows).to_pylist()}")
    return rows


def _join_keys(keys: pa.Table, table: pa.Table, on: list[str]) -> tuple[pa.Table, pa.Table]:
    """The ``on`` columns of both sides as a join compares them: indices into ``table``'s dictionary
    where it holds a column as one (spl_hf.held), the values otherwise."""
    pairs = [key_codes(keys.column(c), table.column(c)) for c in on]
    return (
        pa.table(dict(zip(on, [k for k, _ in pairs], strict=True))),
        pa.table(dict(zip(on, [t for _, t in pairs], strict=True))),
    )


def _hash_lookup(keys: pa.Table, table: pa.Table, on: list[str]) -> pa.Array | None:
    """:func:`row_numbers` when every row of ``keys`` finds exactly one row of ``table``; else None.

    An inner join that hashes the smaller side (an Arrow join hashes its right table; a build's
    judge_scores is eight times its assigned rows) and puts the rows found in key order without a
    sort. Where some key is absent or found twice, None: the left join decides and raises its errors.
    """
    left = table.select(on).append_column("__row", pa.array(np.arange(table.num_rows, dtype=np.int64)))
    right = keys.select(on).append_column("__key_row", pa.array(np.arange(keys.num_rows, dtype=np.int64)))
    joined = (
        left.join(right, on, join_type="inner")
        if keys.num_rows <= table.num_rows
        else right.join(left, on, join_type="inner")
    )
    if joined.num_rows != keys.num_rows:
        return None
    rows = np.full(keys.num_rows, -1, np.int64)
    rows[joined.column("__key_row").to_numpy()] = joined.column("__row").to_numpy()
    if (rows < 0).any():  # a key row found twice, another not at all
        return None
    return pa.array(rows)


def with_source_preference(scores: pa.Table, pairs: pa.Table, rows: pa.Array | None = None) -> pa.Table:
    """The judged rows with their pair's ``source_preference`` (null where the pair rows hold none), in
    the released score schema. ``rows``: the pair row of each score row, where the caller has it."""
    if "source_preference" in pairs.column_names:
        if rows is None:
            rows = row_numbers(scores, pairs, ["pair_id"], "judged pairs missing from the pair rows")
        pref = pairs.column("source_preference").take(rows)
    else:  # pair rows written without the column: no pool preference is stated
        pref = pa.nulls(scores.num_rows, pa.string())
    # Held as the scores are (spl_hf.held): string columns stay dictionaries.
    return hold(scores.append_column("source_preference", pref), SCORE_FEATURES.arrow_schema)
