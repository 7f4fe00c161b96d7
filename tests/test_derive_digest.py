import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from spl_hf.contract.digest import combine, combine_scalar, hash_array, hash_value

MESSAGES = pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))
TEXT = st.one_of(st.none(), st.text(max_size=60))
MSG_LISTS = st.one_of(
    st.none(),
    st.lists(st.one_of(st.none(), st.fixed_dictionaries({"role": TEXT, "content": TEXT})), max_size=3),
)


def _scalar(values, dtype):
    return [hash_value(v, dtype) for v in values]


def _vector(values, dtype, offset=0):
    arr = pa.array([None] * offset + values, type=dtype).slice(offset)
    return [int(x) for x in hash_array(arr)]


@settings(max_examples=60)
@given(st.lists(TEXT, max_size=30), st.integers(0, 3))
def test_vectorised_string_hash_equals_reference(values, offset):
    assert _vector(values, pa.string(), offset) == _scalar(values, pa.string())
    assert _vector(values, pa.large_string()) == _scalar(values, pa.large_string())


@settings(max_examples=60)
@given(st.lists(MSG_LISTS, max_size=12), st.integers(0, 2))
def test_vectorised_nested_hash_equals_reference(values, offset):
    assert _vector(values, MESSAGES, offset) == _scalar(values, MESSAGES)


@given(
    st.lists(st.one_of(st.none(), st.booleans()), max_size=20),
    st.lists(st.one_of(st.none(), st.integers(-(2**31), 2**31 - 1)), max_size=20),
)
def test_vectorised_scalar_types_equal_reference(bools, ints):
    assert _vector(bools, pa.bool_()) == _scalar(bools, pa.bool_())
    assert _vector(ints, pa.int32()) == _scalar(ints, pa.int32())


def test_constant_column_fast_path_matches_reference():
    values = ["sha256-of-the-rule-base"] * 100
    assert _vector(values, pa.string()) == _scalar(values, pa.string())


def test_hash_distinguishes_null_empty_and_moved_boundaries():
    hashes = _vector([None, "", "ab", "a", "b", "ba"], pa.string())
    assert len(set(hashes)) == 6
    lists = _vector([None, [], [{"role": "a", "content": "b"}], [{"role": "ab", "content": ""}]], MESSAGES)
    assert len(set(lists)) == 4


def test_combined_digest_equals_reference_and_depends_on_field_order():
    a = pa.array(["x", "y"])
    b = pa.array([True, None])
    vec = combine([hash_array(a), hash_array(b)]).to_pylist()
    ref = [
        combine_scalar([hash_value(x, pa.string()), hash_value(y, pa.bool_())])
        for x, y in zip(["x", "y"], [True, None])
    ]
    assert vec == ref
    assert combine([hash_array(b), hash_array(a)]).to_pylist() != vec
    assert all(len(d) == 16 for d in vec)


def test_low_cardinality_dictionary_path_matches_reference():
    values = ["comply", "refuse", None, "none", ""] * 1000
    assert _vector(values, pa.string()) == _scalar(values, pa.string())


def test_string_hashes_do_not_depend_on_how_a_long_column_is_sliced(monkeypatch):
    """Long text columns are hashed in bounded passes (bounded memory); the hashes are the same."""
    import numpy as np
    import pyarrow as pa

    import spl_hf.contract.digest as digest

    rng = np.random.default_rng(3)
    texts = [
        "".join(chr(97 + int(c)) for c in rng.integers(0, 26, int(k))) for k in rng.integers(0, 400, 500)
    ]
    texts[7] = "x" * 5000  # one string longer than a slice
    texts[8] = None
    arr = pa.array(texts, pa.string())
    whole = digest.hash_array(arr)
    monkeypatch.setattr(digest, "SLICE_BYTES", 1000)
    sliced = digest.hash_array(arr)
    assert np.array_equal(whole, sliced)
    assert np.array_equal(
        sliced[:50], np.array([digest.hash_value(t, pa.string()) for t in texts[:50]], dtype=np.uint64)
    )
