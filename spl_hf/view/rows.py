"""The rows table of a release, filtered and paged in Arrow.

One slim table is read once per release: the columns a reader filters on (id, tenet, source, score,
label) and the prompt's first message for text search, with each row's position so that its config,
split and index (and so its explanation) are one call away. Filters are Arrow expressions and a page
is a slice: only the rows shown become Python objects, so a card-scale release (196,000 rows) pages
as fast as a small one.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from spl_hf.contract import INCONSISTENT, POSITIONS, position_codes
from spl_hf.explain import Release, ReleaseError

_PROMPTS_LOCK = threading.Lock()
SNIPPET = 200  # characters of each text shown in the table (the Explain tab shows them whole)
# What a page row holds: the index columns, then the texts read for the page's rows alone.
COLUMNS = ("id", "tenet", "source", "score", "label", "position", "prompt", "response_1", "response_2")
# The index's generic columns named for what they hold, per kind of release (the table's headers).
HEADERS = {
    "tenets": {
        "id": "scenario id",
        "tenet": "tenet",
        "source": "source",
        "score": "|score|",
        "label": "chosen side",
        "position": "judge orderings",
        "prompt": "prompt",
        "response_1": "chosen",
        "response_2": "rejected",
    },
    "spl": {
        "id": "pair id",
        "tenet": "prompt topic",
        "source": "source",
        "score": "rank difference",
        "label": "label or why none",
        "prompt": "prompt",
        "response_1": "response A",
        "response_2": "response B",
    },
}
# The position filter's values: one class, or either inconsistent one.
POSITION_FILTERS = ("inconsistent", "consistent", "first_slot", "second_slot", "undecided")


@dataclass(frozen=True)
class RowFilter:
    tenet: str | None = None
    source: str | None = None
    score_min: float | None = None
    score_max: float | None = None
    label: str | None = None
    text: str | None = None
    position: str | None = None  # one of POSITION_FILTERS (tenet releases)


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
    """The slim rows table and where each of its rows lives (config, split, first position).

    The prompt texts (the largest column) are read only when a text search first needs them; until
    then a page reads the prompts of its own rows alone.
    """

    kind: str
    table: pa.Table
    parts: list[tuple[str, str, int]]  # (config, split, position of its first row), in order
    release: Release

    @property
    def total(self) -> int:
        return self.table.num_rows

    @property
    def columns(self) -> tuple[str, ...]:
        """The page columns this kind shows (an SPL row has no judge orderings)."""
        return tuple(c for c in COLUMNS if c in HEADERS[self.kind])

    def values(self, column: str) -> list[str]:
        return sorted(v for v in pc.unique(self.table.column(column)).to_pylist() if v is not None)

    def locate(self, pos: int) -> tuple[str, str, int]:
        starts = [p[2] for p in self.parts]
        k = int(np.searchsorted(starts, pos, side="right") - 1)
        config, split, start = self.parts[k]
        return config, split, pos - start

    def _with_prompts(self) -> pa.Table:
        with _PROMPTS_LOCK:  # the session preloads them in a thread; a search may ask at the same time
            return self._read_prompts()

    def _read_prompts(self) -> pa.Table:
        if "prompt" not in self.table.column_names:
            texts = [
                first_content(self.release.dataset(c, s).to_table(columns=["prompt"]).column("prompt"))
                for c, s, _ in self.parts
            ]
            column = pa.chunked_array([pc.cast(t, pa.string()) for t in texts], pa.string())
            self.table = self.table.append_column("prompt", column)
        return self.table

    def _page_texts(self, rows: list[dict]) -> None:
        """Each row's prompt and two responses, read for these rows only (the prompt from the index
        once it holds the prompts)."""
        response_columns = ("chosen", "rejected") if self.kind == "tenets" else ("response_a", "response_b")
        by_part: dict[tuple[str, str], list[int]] = {}
        for r in rows:
            by_part.setdefault((r["config"], r["split"]), []).append(r["index"])
        texts: dict[tuple[str, str, int], dict] = {}
        for (config, split), indices in by_part.items():
            taken = self.release.take(config, split, indices, ["prompt", *response_columns])
            for i, row in zip(indices, taken.to_pylist()):
                texts[config, split, i] = row
        for r in rows:
            row = texts[r["config"], r["split"], r["index"]]
            r["prompt"] = _prompt_snippet(row["prompt"])
            r["response_1"], r["response_2"] = (_snippet(_last(row[c])) for c in response_columns)

    def preload_prompts(self) -> None:
        """Read the prompt texts now (the viewer calls this in a thread after the first page)."""
        self._with_prompts()

    def page(self, flt: RowFilter, page: int = 0, size: int = 50) -> Page:
        table = self._with_prompts() if flt.text else self.table
        selected = table.filter(_expression(flt)) if _active(flt) else table
        matched = selected.num_rows
        pages = max(1, math.ceil(matched / size))
        page = min(max(page, 0), pages - 1)
        rows = selected.slice(page * size, size).to_pylist()
        for r in rows:
            r["config"], r["split"], r["index"] = self.locate(r.pop("pos"))
            r["position"] = None if r["position"] is None else POSITIONS[r["position"]]
        self._page_texts(rows)
        return Page(
            [{c: r.get(c) for c in (*COLUMNS, "config", "split", "index")} for r in rows],
            matched,
            self.total,
            page,
            pages,
        )


def _snippet(text: str | None) -> str:
    text = " ".join((text or "").split())  # one line: the table wraps it
    return text if len(text) <= SNIPPET else text[: SNIPPET - 1] + "…"


def _last(value) -> str | None:
    """A response's text: a string (SPL), or the last message of a conversation (tenet rows)."""
    if isinstance(value, list):
        return value[-1]["content"] if value else None
    return value


def _prompt_snippet(messages: list[dict] | None) -> str:
    """The prompt's first message, with the number of turns when there are more."""
    messages = messages or []
    first = _snippet(messages[0]["content"] if messages else "")
    return f"({len(messages)} turns) {first}" if len(messages) > 1 else first


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
    if flt.position == "inconsistent":  # the index holds each class as its code in POSITIONS
        expr &= pc.field("position").isin([POSITIONS.index(p) for p in sorted(INCONSISTENT)])
    elif flt.position:
        expr &= pc.field("position") == POSITIONS.index(flt.position)
    if flt.text:
        hit = pc.match_substring(pc.field("prompt"), flt.text, ignore_case=True)
        expr &= hit | pc.match_substring(pc.field("id"), flt.text, ignore_case=True)
    return expr


def _slim(t: pa.Table, start: int) -> pa.Table:
    """The index columns as plain strings, with each row's position in the release and (tenet rows)
    its judgement's position-consistency class."""
    if "p_a_first" in t.column_names:
        p1, p2 = (t[c].to_numpy(zero_copy_only=False) for c in ("p_a_first", "p_a_second"))
        position = pa.array(position_codes(p1, p2), pa.int8())
    else:
        position = pa.nulls(t.num_rows, pa.int8())
    return pa.table(
        {
            "id": pc.cast(t["id"], pa.string()),
            "tenet": pc.cast(t["tenet"], pa.string()),
            "source": pc.cast(t["source"], pa.string()),
            "score": pc.cast(t["score"], pa.float64()),
            "label": pc.cast(t["label"], pa.string()),
            "position": position,
            "pos": pa.array(np.arange(start, start + t.num_rows, dtype=np.int64)),
        }
    )


def tenet_rows(release: Release) -> RowsIndex:
    """Config ``all`` (every row once): the score is the stored |score|, the label the chosen side.
    One scan reads the flat columns and only the ``chosen_side`` leaf of the derivation."""
    columns = {
        "id": pc.field("scenario_id"),
        "tenet": pc.field("tenet"),
        "source": pc.field("source"),
        "score": pc.field("score"),
        "label": pc.field("derivation", "chosen_side"),
        "p_a_first": pc.field("derivation", "judge", "p_a_first"),
        "p_a_second": pc.field("derivation", "judge", "p_a_second"),
    }
    t = release.dataset("all", "train").to_table(columns=columns)
    return RowsIndex("tenets", _slim(t, 0), [("all", "train", 0)], release)


def spl_rows(release: Release) -> RowsIndex:
    """Config ``derivations`` (every pair), split by split: the prompt's topic in the tenet column, the
    rank difference as the score, and label a/b or the no-label reason."""
    config = "derivations" if "derivations" in release.splits else release.default_config
    columns = {
        "id": pc.field("pair_id"),
        "tenet": pc.field("prompt_attributes", "topic"),
        "source": pc.field("source"),
        "score": pc.field("derivation", "rank_diff"),
        "label": pc.field("derivation", "label"),
        "reason": pc.field("derivation", "no_label_reason"),
    }
    tables, parts, start = [], [], 0
    for split in release.splits[config]:
        t = release.dataset(config, split).to_table(columns=columns)
        t = t.set_column(t.schema.get_field_index("label"), "label", pc.coalesce(t["label"], t["reason"]))
        tables.append(_slim(t, start))
        parts.append((config, split, start))
        start += t.num_rows
    if not tables:
        raise ReleaseError(f"{release.describe()}: config {config!r} declares no split")
    return RowsIndex("spl", pa.concat_tables(tables), parts, release)


def rows_index(release: Release) -> RowsIndex:
    return tenet_rows(release) if release.kind == "tenets" else spl_rows(release)
