"""The judge stage's outcome streamed from its shards into columns, and written as ``scores.parquet``.

At card scale the judge stage has 16.4M (pair, tenet) scores. Held as Python dicts they took about
3.45 KB each (53 GiB); here each shard's records are parsed by Arrow (its JSON reader, outside the
GIL, on the shard-reading threads) into five float64 columns and three small codes per item, about
53 bytes per score. The columns that follow from the pair or the tenet (ids, source, the judged
input's hash, the tenet name) are checked against the plan, never stored per score, and joined
back while ``scores.parquet`` is written in input order, one Parquet row group at a time. The file
is byte for byte what ``pa.Table.from_pylist`` of the score rows and ``pq.write_table`` give.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from spl_hf.backends.judge import SCORE_COLUMNS, JudgeItems, NotJudged
from spl_hf.backends.runner import StageRun
from spl_hf.backends.shards import ResultsFolderError
from spl_hf.files import ROW_GROUP_ROWS, write_parquet_batches

FLOATS = ("score", "p_a_first", "p_a_second", "mass_first", "mass_second")
CODED = ("model_id", "model_revision", "template_hash")  # one value per engine: a code per score
PER_PAIR = ("pair_id", "prompt_id", "source", "row_id", "input_sha256")
OK, FAILED, NOT_JUDGED = 1, 2, 3


def _row_schema() -> Any:
    import pyarrow as pa

    types = {"row_id": pa.int64(), **dict.fromkeys(FLOATS, pa.float64())}
    # The rows are stored as sorted-key JSON, and the dicts read back from them kept that order.
    return pa.schema([(c, types.get(c, pa.string())) for c in sorted(SCORE_COLUMNS)])


@dataclass
class ScoreColumns:
    """Every (pair, tenet) outcome of a judge stage, by item index (pairs as given, then tenets)."""

    items: JudgeItems
    status: Any = None  # int8 per item: OK, FAILED or NOT_JUDGED (0: not read)
    floats: Any = None  # float64 (5, items)
    codes: Any = None  # int32 (3, items): index into ``values``
    values: list[dict[Any, int]] = field(default_factory=lambda: [{} for _ in CODED])
    others: list[tuple[int, str, dict[str, Any], str]] = field(default_factory=list)  # not ok, by item

    def __post_init__(self) -> None:
        n = len(self.items)
        self.status = np.zeros(n, np.int8)
        self.floats = np.zeros((len(FLOATS), n), np.float64)
        self.codes = np.zeros((len(CODED), n), np.int32)
        self._pairs = pair_table(self.items.pairs)
        self._tenets = [t.name for t in self.items.tenets]

    # -- reading ------------------------------------------------------------------------------------
    def parse(self, idx: Any, table: Any, path: str) -> tuple[Any, ...]:
        """One shard's records (``idx``: their item indices), parsed and checked against the plan.

        Thread-safe (it only reads this object), so the runner's reading threads call it."""
        import pyarrow.compute as pc

        status = np.asarray(table.column("status").to_pylist(), dtype=object)
        ok = status == "ok"
        others = []
        for k in np.flatnonzero(~ok):
            if status[k] not in ("failed", "not_judged"):
                raise ResultsFolderError(f"{path}: record {k} has status {status[k]!r}")
            row = table.column("row")[int(k)].as_py()
            extra = {} if row is None else _loads(row)
            others.append((int(idx[k]), str(status[k]), extra, table.column("reason")[int(k)].as_py()))
        codes = np.where(ok, OK, np.where(status == "failed", FAILED, NOT_JUDGED)).astype(np.int8)
        rows = None
        if ok.any():
            rows = parse_rows(pc.filter(table.column("row"), pa_mask(ok)), path)
            self._check(rows, idx[ok], path)
        return idx, codes, others, ok, rows

    def add(self, parsed: tuple[Any, ...]) -> None:
        idx, codes, others, ok, rows = parsed
        self.others.extend(others)
        self.status[idx] = codes
        if rows is None:
            return
        at = idx[ok]
        for j, name in enumerate(FLOATS):
            self.floats[j, at] = rows.column(name).to_numpy()
        for j, name in enumerate(CODED):
            self.codes[j, at] = self._code(j, rows.column(name))

    def _code(self, j: int, column: Any) -> Any:
        import pyarrow.compute as pc

        enc = pc.dictionary_encode(column.combine_chunks(), null_encoding="encode")
        table = self.values[j]
        local = np.array([table.setdefault(v, len(table)) for v in enc.dictionary.to_pylist()], np.int32)
        return local[enc.indices.to_numpy(zero_copy_only=False)]

    def _check(self, rows: Any, at: Any, path: str) -> None:
        """The columns that follow from the item equal the planned pair's and tenet's values."""
        import pyarrow as pa

        n = len(self.items.tenets)
        pair, tenet = at // n, at % n
        expect = self._pairs.take(pa.array(pair))
        for name in PER_PAIR:
            if not rows.column(name).combine_chunks().equals(expect.column(name).combine_chunks()):
                raise ResultsFolderError(f"{path}: column {name!r} is not the planned pairs' {name}")
        names = pa.array(self._tenets).take(pa.array(tenet))
        if not rows.column("tenet").combine_chunks().equals(names):
            raise ResultsFolderError(f"{path}: column 'tenet' is not the planned tenets")

    # -- the outcome --------------------------------------------------------------------------------
    @property
    def scores(self) -> int:
        return int(np.count_nonzero(self.status == OK))

    def outcome(self) -> tuple[list[dict[str, Any]], NotJudged]:
        """Refused (pair, tenet)s (as ``judge_outcome`` gives them) and the not-judged, in input order."""
        if (self.status == 0).any():
            raise RuntimeError(f"judge: {int((self.status == 0).sum())} item(s) are in no shard read")
        not_judged = NotJudged(by_tenet={t: 0 for t in self._tenets})
        failures = []
        for _, status, row, reason in sorted(self.others, key=lambda o: o[0]):
            if status == "failed":
                failures.append({"index": row["index"], "pair_id": row["pair_id"], "reason": reason})
            else:
                not_judged.add(row["pair_id"], row["tenet"], reason)
        return failures, not_judged

    def mean_abs_score(self) -> float:
        """Mean |score| summed in input order, one float after another (as ``sum`` of the rows gives it)."""
        ok = np.flatnonzero(self.status == OK)
        total = 0.0
        for start in range(0, len(ok), ROW_GROUP_ROWS):
            total = sum(np.abs(self.floats[0, ok[start : start + ROW_GROUP_ROWS]]).tolist(), total)
        return total / len(ok)

    def first(self, name: str) -> Any:
        j = CODED.index(name)
        code = int(self.codes[j, np.flatnonzero(self.status == OK)[0]])
        return next(v for v, c in self.values[j].items() if c == code)

    def write(self, path: Path) -> None:
        """``scores.parquet``: the ok rows in input order, typed as ``from_pylist`` types them."""
        ok = np.flatnonzero(self.status == OK)
        schema = self._schema(ok)
        groups = (
            self._rows(ok[start : start + ROW_GROUP_ROWS], schema)
            for start in range(0, len(ok), ROW_GROUP_ROWS)
        )
        write_parquet_batches(path, schema, groups)

    def _schema(self, ok: Any) -> Any:
        """``from_pylist``'s inference: a column with no value at all is of the null type."""
        import pyarrow as pa

        schema = _row_schema()
        pairs = self._pairs.take(pa.array(np.unique(ok // len(self.items.tenets))))
        empty = {"row_id": pairs.column("row_id").null_count == pairs.num_rows}
        for j, name in enumerate(CODED):
            used = np.unique(self.codes[j, ok])
            empty[name] = all(v is None for v, c in self.values[j].items() if c in set(used.tolist()))
        return pa.schema([pa.field(f.name, pa.null()) if empty.get(f.name) else f for f in schema])

    def _rows(self, at: Any, schema: Any) -> Any:
        import pyarrow as pa

        n = len(self.items.tenets)
        pairs = self._pairs.take(pa.array(at // n))
        score = self.floats[0, at]
        cols: dict[str, Any] = {name: pairs.column(name).combine_chunks() for name in PER_PAIR}
        cols["tenet"] = pa.array(self._tenets).take(pa.array(at % n))
        cols["chosen"] = pa.array(np.where(score > 0, "a", np.where(score < 0, "b", "tie")).tolist())
        for j, name in enumerate(FLOATS):
            cols[name] = pa.array(self.floats[j, at])
        for j, name in enumerate(CODED):
            decode = [v for v, _ in sorted(self.values[j].items(), key=lambda vc: vc[1])]
            cols[name] = pa.array(decode or [None]).take(pa.array(self.codes[j, at]))
        return pa.table([cols[f.name].cast(f.type) for f in schema], schema=schema)


def read_scores(run: StageRun, items: JudgeItems, threads: int = 4) -> ScoreColumns:
    """Every shard of a judge stage run into :class:`ScoreColumns`, read ``threads`` at a time."""
    columns = ScoreColumns(items)
    for parsed in run.tables(threads=threads, parse=columns.parse):
        columns.add(parsed)
    return columns


def pair_table(pairs: Any) -> Any:
    """The per-pair score columns, one row per pair (the judged input's hash computed once per pair)."""
    import pyarrow as pa

    return pa.table(
        {
            "pair_id": pa.array([p.pair_id for p in pairs], pa.string()),
            "prompt_id": pa.array([p.prompt_id for p in pairs], pa.string()),
            "source": pa.array([p.source for p in pairs], pa.string()),
            "row_id": pa.array([p.row_id for p in pairs], pa.int64()),
            "input_sha256": pa.array([p.input_sha256 for p in pairs], pa.string()),
        }
    )


def parse_rows(rows: Any, path: str) -> Any:
    """Score-row JSON strings as a typed table (Arrow's JSON reader: no Python object per row)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.json as pajson

    rows = rows.combine_chunks() if isinstance(rows, pa.ChunkedArray) else rows
    joined = pc.binary_join(pa.ListArray.from_arrays(pa.array([0, len(rows)], pa.int32()), rows), "\n")
    buf = joined[0].as_buffer()
    opts = pajson.ParseOptions(explicit_schema=_row_schema(), unexpected_field_behavior="error")
    try:
        return pajson.read_json(
            pa.BufferReader(buf), read_options=pajson.ReadOptions(use_threads=False), parse_options=opts
        )
    except pa.ArrowInvalid as exc:
        raise ResultsFolderError(f"{path}: a score row that is not the judge's ({exc})") from None


def pa_mask(mask: Any) -> Any:
    import pyarrow as pa

    return pa.array(mask, pa.bool_())


def _loads(text: str) -> Any:
    import json

    return json.loads(text)
