"""The rows table of a release, filtered and paged in Arrow.

One slim table is read once per release: the columns a reader filters on (id, tenet, source, score,
label) and the prompt's first message for text search, with each row's position so that its config,
split and index (and so its explanation) are one call away. Filters are Arrow expressions and a page
is a slice: only the rows shown become Python objects, so a card-scale release (196,000 rows) pages
as fast as a small one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from spl_hf.explain import Release, ReleaseError

SNIPPET = 160  # characters of the prompt shown in the table
COLUMNS = ("id", "tenet", "source", "score", "label", "prompt")


@dataclass(frozen=True)
class RowFilter:
    tenet: str | None = None
    source: str | None = None
    score_min: float | None = None
    score_max: float | None = None
    label: str | None = None
    text: str | None = None


@dataclass(frozen=True)
class Page:
    rows: list[dict]  # COLUMNS plus config, split, index
    matched: int
    total: int
    page: int
    pages: int


def first_content(messages: pa.ChunkedArray | pa.Array) -> pa.Array:
    """The content of each row's first message ("" where there is none), column-wise."""
    arr = messages.combine_chunks() if isinstance(messages, pa.ChunkedArray) else messages
    lengths = pc.list_value_length(arr).fill_null(0).to_numpy(zero_copy_only=False)
    flat = pc.struct_field(pc.list_flatten(arr), "content")
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    has = lengths > 0
    if not len(flat):
        return pa.array([""] * len(arr), pa.string())
    taken = flat.take(pa.array(np.where(has, starts, 0)))
    return pc.if_else(pa.array(has), taken, pa.scalar("", taken.type))


@dataclass
class RowsIndex:
    """The slim rows table and where each of its rows lives (config, split, first position)."""

    kind: str
    table: pa.Table
    parts: list[tuple[str, str, int]]  # (config, split, position of its first row), in order

    @property
    def total(self) -> int:
        return self.table.num_rows

    def values(self, column: str) -> list[str]:
        return sorted(v for v in pc.unique(self.table.column(column)).to_pylist() if v is not None)

    def locate(self, pos: int) -> tuple[str, str, int]:
        starts = [p[2] for p in self.parts]
        k = int(np.searchsorted(starts, pos, side="right") - 1)
        config, split, start = self.parts[k]
        return config, split, pos - start

    def page(self, flt: RowFilter, page: int = 0, size: int = 50) -> Page:
        selected = self.table.filter(_expression(flt)) if _active(flt) else self.table
        matched = selected.num_rows
        pages = max(1, math.ceil(matched / size))
        page = min(max(page, 0), pages - 1)
        rows = selected.slice(page * size, size).to_pylist()
        for r in rows:
            r["config"], r["split"], r["index"] = self.locate(r.pop("pos"))
            r["prompt"] = r["prompt"][:SNIPPET]
        return Page(rows, matched, self.total, page, pages)


def _active(flt: RowFilter) -> bool:
    return any(v not in (None, "") for v in vars(flt).values())


def _expression(flt: RowFilter) -> pc.Expression:
    expr = pc.scalar(True)
    for column in ("tenet", "source", "label"):
        value = getattr(flt, column)
        if value:
            expr &= pc.field(column) == value
    if flt.score_min is not None:
        expr &= pc.field("score") >= flt.score_min
    if flt.score_max is not None:
        expr &= pc.field("score") <= flt.score_max
    if flt.text:
        hit = pc.match_substring(pc.field("prompt"), flt.text, ignore_case=True)
        expr &= hit | pc.match_substring(pc.field("id"), flt.text, ignore_case=True)
    return expr


def _slim(ids, tenet, source, score, label, prompt, start: int) -> pa.Table:
    n = len(ids)
    return pa.table(
        {
            "id": pc.cast(ids, pa.string()),
            "tenet": pc.cast(tenet, pa.string()),
            "source": pc.cast(source, pa.string()),
            "score": score,
            "label": pc.cast(label, pa.string()),
            "prompt": pc.cast(first_content(prompt), pa.string()),
            "pos": pa.array(np.arange(start, start + n, dtype=np.int64)),
        }
    )


def tenet_rows(release: Release) -> RowsIndex:
    """Config ``all`` (every row once): the score is the stored |score|, the label the chosen side."""
    columns = ["scenario_id", "tenet", "source", "score", "prompt", "derivation"]
    t = release.dataset("all", "train").to_table(columns=columns)
    side = pc.struct_field(t.column("derivation").combine_chunks(), "chosen_side")
    table = _slim(t["scenario_id"], t["tenet"], t["source"], t["score"], side, t["prompt"], 0)
    return RowsIndex("tenets", table, [("all", "train", 0)])


def spl_rows(release: Release) -> RowsIndex:
    """Config ``derivations`` (every pair), split by split: the prompt's topic in the tenet column, the
    rank difference as the score, and label a/b or the no-label reason."""
    config = "derivations" if "derivations" in release.splits else release.default_config
    tables, parts, start = [], [], 0
    for split in release.splits[config]:
        columns = ["pair_id", "source", "prompt", "derivation", "prompt_attributes"]
        t = release.dataset(config, split).to_table(columns=columns)
        der = t.column("derivation").combine_chunks()
        label = pc.coalesce(pc.struct_field(der, "label"), pc.struct_field(der, "no_label_reason"))
        rank = pc.cast(pc.struct_field(der, "rank_diff"), pa.float64())
        topic = pc.struct_field(t.column("prompt_attributes").combine_chunks(), "topic")
        tables.append(_slim(t["pair_id"], topic, t["source"], rank, label, t["prompt"], start))
        parts.append((config, split, start))
        start += t.num_rows
    if not tables:
        raise ReleaseError(f"{release.describe()}: config {config!r} declares no split")
    return RowsIndex("spl", pa.concat_tables(tables), parts)


def rows_index(release: Release) -> RowsIndex:
    return tenet_rows(release) if release.kind == "tenets" else spl_rows(release)
