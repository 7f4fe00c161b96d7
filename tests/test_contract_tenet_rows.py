"""The judged-input hash computed column-wise equals the per-row definition, for any text."""

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from spl_hf.contract import ROW_FEATURES, input_hashes, oriented_input_hashes_arrow, pair_input_hash

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12) | st.sampled_from(
    ["", '"', "\\", "\\n", "\n\r\t\b\f", "\x00\x1f\x7f", "\u2028é😀", '{"role":"x"}']
)
MESSAGES = st.lists(st.fixed_dictionaries({"role": TEXT, "content": TEXT}), max_size=3)
MESSAGE_TYPE = ROW_FEATURES.arrow_schema.field("prompt").type


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(MESSAGES, TEXT, TEXT), min_size=1, max_size=8))
def test_vectorised_input_hash_is_pair_input_hash(rows):
    prompts, a, b = zip(*rows)
    got = input_hashes(pa.array(list(prompts), MESSAGE_TYPE), pa.array(list(a)), pa.array(list(b)))
    assert got.to_pylist() == [pair_input_hash(p, x, y) for p, x, y in rows]


def test_oriented_hash_puts_texts_back_in_judged_order_and_nulls_never_match():
    prompt = [{"role": "user", "content": "q"}]
    reply = lambda text: [{"role": "assistant", "content": text}]  # noqa: E731
    got = oriented_input_hashes_arrow(
        pa.array([prompt, prompt, prompt, prompt], MESSAGE_TYPE),
        pa.array([reply("x"), reply("x"), [], None], MESSAGE_TYPE),
        pa.array([reply("y"), reply("y"), reply("y"), reply("y")], MESSAGE_TYPE),
        pa.array(["a", "b", "a", "a"]),
    ).to_pylist()
    assert got[:2] == [pair_input_hash(prompt, "x", "y"), pair_input_hash(prompt, "y", "x")]
    assert got[2:] == [None, None]


@settings(max_examples=100, deadline=None)
@given(st.lists(TEXT, max_size=8), st.integers(0, 8), st.integers(0, 8))
def test_json_string_bodies_of_a_slice_are_json_dumps(texts, start, length):
    """Escapes are chosen from one scan of the slice's own bytes; the text is json.dumps's either way."""
    import json

    from spl_hf.contract.tenet_rows import json_string_bodies

    for kind in (pa.string(), pa.large_string()):
        values = pa.array(texts, kind).slice(start, length)
        want = [json.dumps(t, ensure_ascii=False)[1:-1] for t in texts[start : start + length]]
        assert json_string_bodies(values).to_pylist() == want
        assert json_string_bodies(pa.chunked_array([values, values], kind)).to_pylist() == want * 2


@settings(max_examples=20, deadline=None)
@given(st.lists(st.tuples(MESSAGES, TEXT, TEXT), min_size=0, max_size=9), st.integers(1, 4))
def test_input_hashes_a_slice_at_a_time_are_the_whole_columns(rows, slice_rows):
    """The audit hashes its rows a slice at a time (to hold only so much JSON): the same hashes."""
    import spl_hf.contract.tenet_rows as tr

    prompts, a, b = zip(*rows) if rows else ((), (), ())
    columns = (
        pa.array(list(prompts), MESSAGE_TYPE),
        pa.array(list(a), pa.string()),
        pa.array(list(b), pa.string()),
    )
    whole = tr._input_hashes(*columns)
    saved, tr.HASH_SLICE_ROWS = tr.HASH_SLICE_ROWS, slice_rows
    try:
        sliced = tr.input_hashes(*columns)
    finally:
        tr.HASH_SLICE_ROWS = saved
    assert sliced.equals(whole)
    assert sliced.to_pylist() == [pair_input_hash(p, x, y) for p, x, y in rows]
