"""Judge scores held with dictionaries (spl_hf.held): the same values and files, a fraction of the bytes."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from datasets import Features, Value
from hypothesis import given, settings
from hypothesis import strategies as st

from spl_hf.assign import encode_scores, read_table
from spl_hf.dataset.folder import ConfigData, write_dataset_folder
from spl_hf.held import (
    _malloc_trim,
    combined,
    count_distinct,
    decoded_nbytes,
    equals_taken,
    first_seen_codes,
    give_back_freed,
    hold,
    index_in,
    key_codes,
    plain,
    taken,
)

TENETS = [f"tenet_{k}" for k in range(49)]


def _scores(pairs: int = 300, seed: int = 0) -> pa.Table:
    """A judge stage's score rows: 49 tenets per pair, one judge, per-pair ids and hashes."""
    rng = np.random.default_rng(seed)
    n = pairs * len(TENETS)
    pair = np.repeat(np.arange(pairs), len(TENETS))
    p1, p2 = rng.random(n), rng.random(n)
    return pa.table(
        {
            "pair_id": [f"pool_{p}" for p in pair],
            "prompt_id": [f"{p // 2:064x}" for p in pair],
            "source": ["hh_train" if p % 3 else "pku_train" for p in pair],
            "tenet": TENETS * pairs,
            "score": p1 - p2,
            "p_a_first": p1,
            "p_a_second": p2,
            "model_id": ["HuggingFaceTB/SmolLM2-135M-Instruct"] * n,
            "model_revision": ["gguf-sha256:" + "b1" * 32] * n,
            "template_hash": ["2d" * 32] * n,
            "input_sha256": [f"{p:064x}" for p in pair],
        }
    )


def test_a_held_table_has_the_same_values_in_under_a_quarter_of_the_bytes():
    table = _scores()
    held = hold(table)
    assert all(pa.types.is_dictionary(held.schema.field(c).type) for c in ("pair_id", "tenet", "model_id"))
    assert held.schema.field("score").type == pa.float64()
    assert held.cast(table.schema).equals(table)
    assert plain(held).equals(table)
    per_score = held.nbytes / held.num_rows
    assert per_score < 100 and per_score * 4 < table.nbytes / table.num_rows, (per_score, table.nbytes)


def test_integer_ids_bound_for_string_fields_are_held_as_their_strings():
    table = pa.table({"pair_id": [3, 4, 3], "score": [0.1, 0.2, 0.3]})
    schema = pa.schema([("pair_id", pa.string()), ("score", pa.float64())])
    assert hold(table, schema).cast(schema).equals(table.cast(schema))


@pytest.mark.parametrize("slice_rows", [64, 1 << 16])
def test_decoded_nbytes_is_the_decoded_tables_size_for_any_chunking(monkeypatch, slice_rows):
    import spl_hf.held

    monkeypatch.setattr(spl_hf.held, "SIZE_SLICE", slice_rows)  # sized a slice at a time, or whole
    table = _scores(50)
    schema = table.schema.set(table.schema.get_field_index("tenet"), pa.field("tenet", pa.large_string()))
    nulls = table.set_column(
        2, "source", pa.array([None if i % 9 == 0 else "hh" for i in range(table.num_rows)])
    )
    for held in (
        hold(table),
        pa.concat_tables([hold(table.slice(0, 700)), hold(table.slice(700))]),
        hold(table).slice(3, 1000),
        hold(nulls),
    ):
        assert decoded_nbytes(held, schema) == held.cast(schema).nbytes


def test_key_codes_join_as_the_values_do_repeats_twice_absent_and_null_never():
    held_values = pa.array(["a", "b", "a", None, "c"])
    probe = pa.array(["a", "zz", None, "b", "c"])
    expected = pa.table({"k": probe, "r": range(5)}).join(
        pa.table({"k": held_values, "s": range(5)}), "k", join_type="inner"
    )
    want = sorted(zip(expected.column("r").to_pylist(), expected.column("s").to_pylist(), strict=True))
    for p, h in (
        (probe, held_values.dictionary_encode()),
        (probe.dictionary_encode(), held_values),
        (probe.dictionary_encode(), held_values.dictionary_encode()),
    ):
        pk, hk = key_codes(p, h)
        got = pa.table({"k": pk, "r": range(5)}).join(
            pa.table({"k": hk, "s": range(5)}), "k", join_type="inner"
        )
        assert sorted(zip(got.column("r").to_pylist(), got.column("s").to_pylist(), strict=True)) == want
    assert want == [(0, 0), (0, 2), (3, 1), (4, 4)]


def test_equals_taken_and_index_in_match_their_plain_definitions():
    column = pa.array(["x", "y", None, "x", "q"])
    values = pa.array(["x", None, "y", "w"])
    rows = pa.array([0, 2, 0, 1, 3])
    want = pc.equal(column, values.take(rows)).to_pylist()
    assert want == [True, True, None, None, False]
    assert equals_taken(column.dictionary_encode(), values, rows).to_pylist() == want
    probe = pa.array(["y", "nope", None, "x"])
    assert (
        index_in(probe.dictionary_encode(), values).to_pylist()
        == pc.index_in(probe, value_set=values).to_pylist()
    )


def test_first_seen_codes_and_count_distinct_ignore_unused_dictionary_values():
    column = pa.array(["b", "a", "b", None, "c"]).dictionary_encode()
    kept = column.filter(pa.array([True, True, True, True, False]))  # 'c' stays in the dictionary
    names, codes = first_seen_codes(kept)
    plain_enc = pc.dictionary_encode(kept.cast(pa.string()))
    assert names.to_pylist() == plain_enc.dictionary.to_pylist() == ["b", "a"]
    assert codes.to_pylist() == plain_enc.indices.to_pylist() == [0, 1, 0, None]
    assert count_distinct(kept) == pc.count_distinct(kept.cast(pa.string())).as_py() == 2


def test_encoding_held_scores_gives_the_plain_tables_encoding():
    table = _scores(40).select(["pair_id", "prompt_id", "tenet", "score"])
    # a filtered held table keeps dictionary values no row uses: they must not become ids or tenets
    keep = pc.invert(pc.equal(table.column("tenet"), "tenet_7"))
    a, b = encode_scores(table.filter(keep)), encode_scores(hold(table).filter(keep))
    assert a.pair_ids.equals(b.pair_ids) and a.prompt_ids.equals(b.prompt_ids) and a.tenets == b.tenets
    for name in ("pair", "prompt", "tenet", "score", "pair_hash", "tenet_hash"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name


@pytest.mark.parametrize("max_shard", [10**9, 60_000])
def test_a_folder_written_from_a_held_table_has_the_plain_tables_bytes(tmp_path, max_shard):
    table = _scores(120)
    features = Features(
        {c: Value("float64" if c.startswith(("score", "p_")) else "string") for c in table.column_names}
    )
    folders = []
    for name, t in (("plain", table), ("held", hold(table))):
        out = tmp_path / name
        write_dataset_folder(
            out,
            [ConfigData("judge_scores", features, {"train": t}, default=True)],
            "card\n",
            max_shard_size=max_shard,
        )
        folders.append(out)
    files = [sorted(p.relative_to(f).as_posix() for p in f.rglob("*.parquet")) for f in folders]
    assert files[0] == files[1] and (len(files[0]) == 1) == (max_shard == 10**9)
    for rel in files[0]:
        assert (folders[0] / rel).read_bytes() == (folders[1] / rel).read_bytes()
        assert not pa.types.is_dictionary(pq.read_schema(folders[1] / rel).field("pair_id").type)


def test_read_table_held_reads_parquet_strings_straight_into_dictionaries(tmp_path):
    table = _scores(30)
    pq.write_table(table, tmp_path / "scores.parquet", row_group_size=500)  # several dictionaries
    held = read_table(tmp_path / "scores.parquet", tuple(table.column_names), held=True)
    assert all(held.column(c).num_chunks == 1 for c in held.column_names)
    assert pa.types.is_dictionary(held.schema.field("input_sha256").type)
    assert plain(held).equals(table)


def test_combined_is_concat_and_combine_chunks_and_takes_the_tables_over():
    parts = [hold(_scores(20, seed=s)) for s in range(3)]  # each with its own dictionaries
    want = pa.concat_tables(parts).combine_chunks()
    handed = list(parts)
    got = combined(handed)
    assert handed == []  # the caller's list is emptied: nothing of it is held twice
    assert got.equals(want) and got.schema == want.schema
    assert all(got.column(c).num_chunks == 1 for c in got.column_names)
    assert plain(got).equals(pa.concat_tables([plain(p) for p in parts]))
    with pytest.raises(pa.ArrowInvalid):
        combined([parts[0], parts[1].drop_columns(["score"])])


def _rss_mib() -> float:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS")) / 1024


@pytest.mark.skipif(_malloc_trim() is None, reason="the C library has no malloc_trim")
def test_give_back_freed_returns_a_fragmented_heap_to_the_system():
    # 2 KB objects come from malloc (not Python's small-object arenas); keeping one in 64 leaves the
    # freed ones between live ones, which free() alone cannot hand back.
    blocks = [bytes(2048) + bytes([i % 251]) for i in range(150_000)]
    kept = blocks[::64]
    del blocks
    before = _rss_mib()
    give_back_freed()
    assert before - _rss_mib() > 100, "about 290 MB were freed between live blocks"
    assert len(kept) == 2344


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 5), min_size=1, max_size=6), st.data())
def test_taken_is_take_a_chunk_at_a_time(chunk_rows, data):
    """The audit's take of a slice of rows from many files' chunks: the rows ``take`` gives, in order."""
    start, chunks = 0, []
    for n in chunk_rows:
        chunks.append(
            pa.table(
                {
                    "i": pa.array(range(start, start + n), pa.int64()),
                    "text": pa.array(
                        [None if k % 3 == 0 else f"t{k}" * k for k in range(start, start + n)], pa.string()
                    ),
                    "held": pa.array(
                        [f"d{k % 2}" for k in range(start, start + n)], pa.string()
                    ).dictionary_encode(),
                }
            )
        )
        start += n
    table = pa.concat_tables(chunks)
    indices = data.draw(st.lists(st.integers(0, max(start - 1, 0)), max_size=12) if start else st.just([]))
    got = taken(table, np.array(indices, dtype=np.int64))
    assert got.to_pylist() == table.take(pa.array(indices, pa.int64())).to_pylist()
    assert got.schema.equals(table.schema)
    assert all(c.num_chunks <= 1 for c in got.columns)
    if start:
        with pytest.raises(IndexError):
            taken(table, np.array([start]))
