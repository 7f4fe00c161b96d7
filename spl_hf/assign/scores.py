"""Validation and integer encoding of judge score tables.

A score table has one row per judged (pair, tenet): `pair_id`, `prompt_id`, `tenet`, `score` (signed,
in [-1, 1]). Ids are encoded as indices into their sorted distinct values, so every later step (and the
output order) depends only on the content of the table, never on its row order.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from spl_hf.assign.tiebreak import fnv1a64
from spl_hf.errors import SplHfError
from spl_hf.held import plain_type

REQUIRED_COLUMNS: tuple[str, ...] = ("pair_id", "prompt_id", "tenet", "score")
_SHOWN_ROWS = 10


class ScoresError(SplHfError):
    """Invalid score table; the message names the source, the problem and the offending rows."""


@dataclass(frozen=True)
class ScoreTable:
    """A validated score table with its ids encoded as sorted-distinct indices."""

    table: pa.Table  # the four required columns, original row order and types
    pair_ids: pa.Array  # sorted distinct values; `pair[i]` indexes into it
    prompt_ids: pa.Array
    tenets: tuple[str, ...]
    pair: np.ndarray  # int32 per row
    prompt: np.ndarray  # int32 per row
    tenet: np.ndarray  # int32 per row
    score: np.ndarray  # float64 per row
    pair_hash: np.ndarray  # uint64 per distinct pair (fnv1a64 of its text)
    tenet_hash: np.ndarray  # uint64 per distinct tenet
    source: str = "<table>"

    @property
    def num_rows(self) -> int:
        return len(self.score)


def _describe_rows(table: pa.Table, rows: np.ndarray) -> str:
    shown = table.take(pa.array(rows[:_SHOWN_ROWS], type=pa.int64())).to_pylist()
    parts = [
        f"row {int(r)} ({', '.join(f'{k}={v!r}' for k, v in rec.items())})"
        for r, rec in zip(rows, shown, strict=False)
    ]
    more = f"; … and {len(rows) - _SHOWN_ROWS} more" if len(rows) > _SHOWN_ROWS else ""
    return "; ".join(parts) + more


def _encode(column: pa.ChunkedArray | pa.Array) -> tuple[pa.Array, np.ndarray]:
    """(sorted distinct values, int32 code per row); one hash pass, then a sort of the distinct values.
    A dictionary column (as a driver holds judge scores, :mod:`spl_hf.held`) is not hashed again: its
    indices are the codes, renumbered over the values its rows use in sorted order."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    enc = column if pa.types.is_dictionary(column.type) else column.dictionary_encode()
    indices = enc.indices.to_numpy(zero_copy_only=False)
    used = np.zeros(len(enc.dictionary), bool)
    used[indices] = True
    values = enc.dictionary.take(pa.array(np.flatnonzero(used)))
    order = pc.array_sort_indices(values).to_numpy()
    code = np.full(len(used), -1, np.int32)
    code[np.flatnonzero(used)[order]] = np.arange(len(order), dtype=np.int32)
    return values.take(pa.array(order)), code[indices]


def _rows_of_repeated(keys: np.ndarray) -> np.ndarray:
    """Row indices whose key occurs more than once, in row order."""
    sk = np.sort(keys)
    if not (sk[1:] == sk[:-1]).any():
        return np.zeros(0, np.int64)
    order = np.argsort(keys, kind="stable")
    sk = keys[order]
    dup = np.zeros(len(keys), dtype=bool)
    same = sk[1:] == sk[:-1]
    dup[1:] |= same
    dup[:-1] |= same
    return np.sort(order[dup])


def encode_scores(table: pa.Table, source: str = "<table>") -> ScoreTable:
    """Validate `table` and encode it; raise ScoresError listing every problem with its rows.

    >>> st = encode_scores(pa.table({"pair_id": ["p1", "p1"], "prompt_id": ["q1", "q1"],
    ...                              "tenet": ["kind", "honest"], "score": [0.1, -0.8]}))
    >>> st.tenets, st.num_rows
    (('honest', 'kind'), 2)
    """
    missing = [c for c in REQUIRED_COLUMNS if c not in table.column_names]
    if missing:
        raise ScoresError(f"{source}: missing column(s) {missing}; found {table.column_names}")
    table = table.select(list(REQUIRED_COLUMNS)).combine_chunks()
    problems: list[str] = []
    for name in ("pair_id", "prompt_id"):
        t = plain_type(table.schema.field(name).type)
        if not (pa.types.is_integer(t) or pa.types.is_string(t) or pa.types.is_large_string(t)):
            problems.append(f"column {name!r} must hold strings or integers, not {t}")
    ttype = plain_type(table.schema.field("tenet").type)
    if not (pa.types.is_string(ttype) or pa.types.is_large_string(ttype)):
        problems.append(f"column 'tenet' must hold strings, not {ttype}")
    stype = table.schema.field("score").type
    if not (pa.types.is_floating(stype) or pa.types.is_integer(stype) or pa.types.is_decimal(stype)):
        problems.append(f"column 'score' must be numeric, not {stype}")
    if problems:
        raise ScoresError(f"{source}: " + "; ".join(problems))

    for name in REQUIRED_COLUMNS:
        nulls = np.flatnonzero(table.column(name).is_null().to_numpy(zero_copy_only=False))
        if len(nulls):
            problems.append(f"{len(nulls)} row(s) with a missing {name}: {_describe_rows(table, nulls)}")
    if problems:
        raise ScoresError(f"{source}: " + " | ".join(problems))

    score = pc.cast(table.column("score"), pa.float64()).to_numpy()
    bad = np.flatnonzero(~(np.abs(score) <= 1.0))  # NaN compares False, so it is caught here too
    if len(bad):
        problems.append(
            f"{len(bad)} row(s) with a NaN or out-of-range score (must be in [-1, 1]): "
            f"{_describe_rows(table, bad)}"
        )
    # Arrow hashes and sorts outside the GIL, so the three columns are encoded side by side.
    with ThreadPoolExecutor(max_workers=3) as pool:
        encoded = pool.map(_encode, [table.column(c) for c in ("pair_id", "prompt_id", "tenet")])
        (pair_ids, pair), (prompt_ids, prompt), (tenet_values, tenet) = encoded
    dups = _rows_of_repeated(pair.astype(np.int64) * len(tenet_values) + tenet)
    if len(dups):
        problems.append(f"{len(dups)} row(s) repeat a (pair_id, tenet): {_describe_rows(table, dups)}")
    # A pair belongs to exactly one prompt; two prompts would break the one-use-per-prompt rule.
    lo = np.full(len(pair_ids), np.iinfo(np.int32).max, np.int32)
    hi = np.full(len(pair_ids), -1, np.int32)
    np.minimum.at(lo, pair, prompt)
    np.maximum.at(hi, pair, prompt)
    conflicted = np.flatnonzero(lo[pair] != hi[pair])
    if len(conflicted):
        problems.append(
            f"{len(conflicted)} row(s) give a pair_id more than one prompt_id: "
            f"{_describe_rows(table, conflicted)}"
        )
    if problems:
        raise ScoresError(f"{source}: " + " | ".join(problems))
    return ScoreTable(
        table=table,
        pair_ids=pair_ids,
        prompt_ids=prompt_ids,
        tenets=tuple(tenet_values.to_pylist()),
        pair=pair,
        prompt=prompt,
        tenet=tenet,
        score=score,
        pair_hash=fnv1a64(pair_ids),
        tenet_hash=fnv1a64(tenet_values),
        source=source,
    )
