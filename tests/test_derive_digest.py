import shutil

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import spl_hf.contract.digest as digest
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


def test_constant_column_fast_path_matches_reference(monkeypatch):
    monkeypatch.setattr(digest, "_strhash", None)  # the shortcut of the numpy path
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


def test_low_cardinality_dictionary_path_matches_reference(monkeypatch):
    monkeypatch.setattr(digest, "_strhash", None)  # the shortcut of the numpy path
    values = ["comply", "refuse", None, "none", ""] * 1000
    assert _vector(values, pa.string()) == _scalar(values, pa.string())


def test_string_hashes_do_not_depend_on_how_a_long_column_is_sliced(monkeypatch):
    """Long text columns are hashed in bounded passes (bounded memory); the hashes are the same."""
    monkeypatch.setattr(digest, "_strhash", None)  # the numpy path is the one that needs passes
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


# ---------------------------------------------------------------- compiled kernel vs numpy path
ANY_TEXT = st.one_of(
    st.none(), st.text(max_size=40), st.text(alphabet="ab", max_size=3), st.binary(max_size=70).map(bytes.hex)
)
needs_kernel = pytest.mark.skipif(digest.KERNEL != "c", reason="the compiled kernel is not built here")


def _both_paths(arr: pa.Array, monkeypatch) -> tuple[np.ndarray, np.ndarray]:
    compiled = digest.hash_array(arr)
    with monkeypatch.context() as m:
        m.setattr(digest, "_strhash", None)
        return compiled, digest.hash_array(arr)


def test_the_compiled_kernel_is_built_where_a_c_compiler_is():
    """setup.py builds it optionally; a failed build would silently fall back to the slow path."""
    if not (shutil.which("cc") or shutil.which("gcc")):
        pytest.skip("no C compiler on this machine")
    assert digest.KERNEL == "c"


@needs_kernel
@settings(max_examples=80, deadline=None)
@given(
    st.lists(ANY_TEXT, max_size=40),
    st.integers(0, 5),
    st.sampled_from([pa.string(), pa.large_string(), pa.binary()]),
)
def test_compiled_and_numpy_string_paths_agree_with_the_reference(values, offset, dtype):
    data = [v.encode() if dtype == pa.binary() and v is not None else v for v in values]
    arr = pa.array([None] * offset + data + ["tail"] * offset, type=dtype).slice(offset, len(data))
    with pytest.MonkeyPatch.context() as mp:
        compiled, numpy_path = _both_paths(arr, mp)
    assert compiled.tolist() == numpy_path.tolist() == [hash_value(v, dtype) for v in data]


@needs_kernel
def test_compiled_and_numpy_paths_agree_on_every_type_of_a_long_column(monkeypatch):
    rng = np.random.default_rng(7)
    words = ["é", "ü", "日本", "", "word", "a" * 300]
    texts = [None if k % 13 == 0 else "".join(rng.choice(words, int(k % 9))) for k in range(5000)]
    arr = pa.array(texts)
    msgs = pa.array([[{"role": "user", "content": t}] if t else None for t in texts], MESSAGES)
    for a in (arr, arr.slice(17, 3000), arr.cast(pa.large_string()), msgs.slice(5), pa.array(["x"] * 500)):
        compiled, numpy_path = _both_paths(a, monkeypatch)
        assert np.array_equal(compiled, numpy_path)
    combined = digest.combine([digest.hash_array(arr), digest.hash_array(msgs)])
    with monkeypatch.context() as m:
        m.setattr(digest, "_strhash", None)
        assert combined.equals(digest.combine([digest.hash_array(arr), digest.hash_array(msgs)]))


@needs_kernel
def test_every_string_length_through_the_kernel_blocks_equals_the_reference(monkeypatch):
    """32-byte blocks, 8-byte blocks and the tail: every length up to 130 bytes, every byte value."""
    data = bytes(range(256)) * 2
    values = [data[k : 2 * k] for k in range(131)]
    arr = pa.array(values, pa.binary())
    compiled, numpy_path = _both_paths(arr, monkeypatch)
    assert compiled.tolist() == numpy_path.tolist() == [hash_value(v, pa.binary()) for v in values]


@needs_kernel
def test_the_compiled_mixer_and_folds_equal_the_numpy_ones(monkeypatch):
    rng = np.random.default_rng(1)
    words, child = (rng.integers(0, 2**64 - 1, 1000, dtype=np.uint64, endpoint=True) for _ in range(2))

    def run():
        folded, xored = words.copy(), words.copy()
        digest._fold(folded, child, digest.GOLD, 3)
        digest._fold(xored, child, 0, 2**64 - 5, xor=True)
        return digest._vmix(words.copy()), folded, xored

    compiled = run()
    monkeypatch.setattr(digest, "_strhash", None)
    for c, n in zip(compiled, run()):
        assert np.array_equal(c, n)
    w, c = int(words[0]), int(child[0])
    assert int(compiled[0][0]) == digest._fmix(w)
    assert int(compiled[1][0]) == digest._fmix(w * digest.GOLD + c + 3)
    assert int(compiled[2][0]) == digest._fmix(w ^ ((c + 2**64 - 5) & digest.MASK))


@needs_kernel
def test_corrupt_offsets_are_refused_not_read_past_the_data():
    data = pa.py_buffer(b"abcdef")
    out = np.empty(2, dtype=np.uint64)

    def run(offsets, out=out):
        return digest._strhash.string_hashes(data, offsets, out, digest.GOLD, 0)

    assert run(np.array([0, 2, 6], np.int32)) == -1
    assert run(np.array([0, 2, 7], np.int64)) == 1
    assert run(np.array([3, 2, 6], np.int32)) == 0
    with pytest.raises(TypeError, match="int32 or int64"):
        run(np.array([0, 2, 6], np.int16))
    with pytest.raises(TypeError, match="2 uint64"):
        run(np.array([0, 2, 6], np.int32), np.empty(3, np.uint64))
    with pytest.raises(TypeError, match="same length"):
        digest._strhash.fold(np.zeros(2, np.uint64), np.zeros(3, np.uint64), 1, 0, False)
