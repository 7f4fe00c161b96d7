from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spl_hf.assign import read_row_groups, read_rows
from spl_hf.files import write_jsonl


def _pairs(n: int) -> pa.Table:
    return pa.table(
        {
            "pair_id": [f"p{i}" for i in range(n)],
            "prompt": [[{"role": "user", "content": f"q{i}"}] for i in range(n)],
            "response_a": [f"a{i}" * (i % 5) for i in range(n)],
        }
    )


def test_read_rows_takes_rows_in_any_order_across_row_groups(tmp_path):
    table = _pairs(230)
    pq.write_table(table, tmp_path / "p.parquet", row_group_size=50)  # five row groups
    rows = np.array([229, 0, 51, 51, 120, 3, 199, 50, 49])  # any order, a repeat
    got = read_rows(tmp_path / "p.parquet", rows, ("prompt", "response_a"))
    assert got.equals(table.select(["prompt", "response_a"]).take(pa.array(rows)))
    assert read_rows(tmp_path / "p.parquet", np.array([], np.int64), ("pair_id",)).num_rows == 0
    with pytest.raises(IndexError, match="outside its 230 rows"):
        read_rows(tmp_path / "p.parquet", np.array([3, 230]), ("pair_id",))
    parts = list(read_row_groups(tmp_path / "p.parquet", ("pair_id",)))
    assert [p.num_rows for p in parts] == [50] * 4 + [30]
    assert pa.concat_tables(parts).equals(table.select(["pair_id"]))


def test_read_rows_of_a_json_lines_table_reads_it_whole(tmp_path):
    table = _pairs(12)
    write_jsonl(tmp_path / "p.jsonl", table.to_pylist())
    rows = np.array([11, 2, 2, 7])
    got = read_rows(tmp_path / "p.jsonl", rows, ("pair_id", "response_a"))
    assert got.to_pylist() == table.select(["pair_id", "response_a"]).take(pa.array(rows)).to_pylist()
    (part,) = read_row_groups(tmp_path / "p.jsonl", ("pair_id",))
    assert part.column("pair_id").to_pylist() == table.column("pair_id").to_pylist()
