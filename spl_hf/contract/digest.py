"""Row digests: a 64-bit checksum of every stored field of a row, computed column-wise.

Arrow arrays are hashed straight from their buffers (no Python loop per row): the pass over every
text byte and the mixer run in the compiled ``spl_hf.contract._strhash`` where it was built, else in
numpy (``KERNEL`` says which; both give the same hashes).
Strings use a polynomial hash over their bytes modulo 2**64 with their length, finished with
the splitmix64 mixer; booleans and integers map injectively to 64-bit words; structs and
lists fold their children position by position through the mixer; nulls hash differently
from every value. The digest makes edits and corruption evident (an accidental collision has
probability about 2**-64); it is not a signature — builds also write a SHA-256 manifest of
their data files for that.

``hash_value`` is the independent per-value reference implementation of the same function;
tests check that both agree.
"""

from __future__ import annotations

import binascii
import itertools
import threading
from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from spl_hf.errors import SplHfError

MASK = (1 << 64) - 1
POLY = 0x100000001B3  # odd, so invertible modulo 2**64
POLY_INV = pow(POLY, -1, 1 << 64)
SEED = 0x243F6A8885A308D3
GOLD = 0x9E3779B97F4A7C15
TAG = {
    "null": 0x6E756C6C,
    "str": 0x737472,
    "bool": 0x626F6F6C,
    "int": 0x696E74,
    "float": 0x666C74,
    "struct": 0x73747275,
    "list": 0x6C697374,
}
_U = np.uint64

try:  # the compiled pass over text bytes (setup.py builds it where a C compiler is found)
    from spl_hf.contract import _strhash
except ImportError:  # pragma: no cover - depends on the install
    _strhash = None
if _strhash is not None and (getattr(_strhash, "API", 0), _strhash.POLY) != (1, POLY):  # pragma: no cover
    # A stale in-place build from another version of the C source: not called with a wrong signature
    # (tests/test_derive_digest.py fails where a compiler is, so the stale build gets noticed).
    _strhash = None

# Which string kernel hashes text: "c" (spl_hf.contract._strhash) or "numpy" (same digests, slower).
KERNEL = "numpy" if _strhash is None else "c"


# ---------------------------------------------------------------- scalar reference
def _fmix(z: int) -> int:
    z &= MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


NULL_HASH = _fmix(SEED ^ TAG["null"])


def hash_value(value: object, dtype: pa.DataType) -> int:
    """Hash one Python value of Arrow type ``dtype`` (reference path, mirrors ``hash_array``).

    Booleans and integers are not mixed here: the map value -> word is already injective, and
    every container (struct, list, row) mixes what it folds in.

    >>> hash_value("x", pa.string()), hash_value(None, pa.string()) == NULL_HASH
    (18307302339841810466, True)
    >>> hash_array(pa.array(["x", None])).tolist() == [hash_value("x", pa.string()), NULL_HASH]
    True
    """
    if value is None:
        return NULL_HASH
    if pa.types.is_string(dtype) or pa.types.is_large_string(dtype) or pa.types.is_binary(dtype):
        data = value.encode() if isinstance(value, str) else bytes(value)  # type: ignore[arg-type]
        s, w = 0, 1
        for b in data:
            s = (s + (b + 1) * w) & MASK
            w = (w * POLY) & MASK
        return _fmix(s ^ ((len(data) * GOLD) & MASK) ^ SEED ^ TAG["str"])
    if pa.types.is_boolean(dtype):
        return (int(bool(value)) + SEED + TAG["bool"]) & MASK
    if pa.types.is_integer(dtype):
        return ((int(value) & MASK) + SEED + TAG["int"]) & MASK  # type: ignore[call-overload]
    if pa.types.is_floating(dtype):
        bits = int(np.array(value, dtype=np.float64).view(np.uint64))
        return (bits + SEED + TAG["float"]) & MASK
    if pa.types.is_struct(dtype):
        h = SEED ^ TAG["struct"]
        for k in range(dtype.num_fields):
            f = dtype.field(k)
            child = hash_value(value.get(f.name), f.type)  # type: ignore[attr-defined]
            h = _fmix((h * GOLD + child + k) & MASK)
        return h
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        s = 0
        for pos, item in enumerate(value):  # type: ignore[attr-defined]
            s = (s + _fmix(hash_value(item, dtype.value_type) + (pos + 1) * GOLD)) & MASK
        return _fmix(s ^ ((len(value) * GOLD) & MASK) ^ SEED ^ TAG["list"])  # type: ignore[arg-type]
    raise TypeError(f"cannot hash Arrow type {dtype}")


def combine_scalar(field_hashes: Sequence[int]) -> str:
    d = SEED
    for k, h in enumerate(field_hashes):
        d = _fmix(d ^ ((h + (k + 1) * GOLD) & MASK))
    return f"{d:016x}"


# ---------------------------------------------------------------- vectorised path
def _vmix(z: np.ndarray) -> np.ndarray:
    """``_fmix`` of every word, in place (callers pass a fresh array); returns ``z``."""
    if _strhash is not None:
        _strhash.mix(z)
        return z
    t = z >> _U(30)
    z ^= t
    z *= _U(0xBF58476D1CE4E5B9)
    np.right_shift(z, _U(27), out=t)
    z ^= t
    z *= _U(0x94D049BB133111EB)
    np.right_shift(z, _U(31), out=t)
    z ^= t
    return z


# Text hashed per pass: the power tables and the work buffer grow to a pass's byte length and are
# kept, so passes over whole card-scale columns (hundreds of MB) would hold GBs for good.
SLICE_BYTES = 1 << 25


class _PowerTables:
    """Cached powers of POLY (and its inverse) so string hashing needs no per-call power pass."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.fwd = np.ones(1, dtype=_U)  # fwd[j] = POLY**j
        self.geo = np.zeros(1, dtype=_U)  # geo[L] = sum_{j<L} POLY**j
        self.forward(1 << 16)
        self.geometric(1 << 16)
        lo = np.full(1 << 16, _U(POLY_INV))
        lo[0] = 1
        self.inv_lo = np.multiply.accumulate(lo)
        step = int(self.inv_lo[-1]) * POLY_INV & MASK  # POLY_INV ** 65536
        hi = np.full(1 << 16, _U(step))
        hi[0] = 1
        self.inv_hi = np.multiply.accumulate(hi)

    def forward(self, n: int) -> np.ndarray:
        """P**0 .. P**(n-1)."""
        if len(self.fwd) < n:
            with self._lock:  # tables are replaced whole, so readers never see a partial one
                if len(self.fwd) < n:
                    old = self.fwd
                    # Only the new powers are computed: P**j for j past the table continues from its end.
                    tail = np.full(_grown(len(old), n) - len(old), _U(POLY))
                    tail[0] = _U(int(old[-1]) * POLY & MASK)
                    self.fwd = np.concatenate([old, np.multiply.accumulate(tail)])
        return self.fwd[:n]

    def geometric(self, n: int) -> np.ndarray:
        """``geo[L]`` for L < n: a separate, shorter table, as it is indexed by a single string's length
        while ``forward`` spans a whole pass."""
        if len(self.geo) < n:
            size = _grown(len(self.geo), n)
            powers = self.forward(size - 1)
            with self._lock:
                if len(self.geo) < n:
                    old = self.geo
                    # geo[L] = geo[m - 1] + sum_{m-1 <= j < L} P**j for the old length m.
                    tail = np.cumsum(powers[len(old) - 1 : size - 1])
                    tail += old[-1]
                    self.geo = np.concatenate([old, tail])
        return self.geo[:n]

    def inverse(self, k: np.ndarray) -> np.ndarray:
        return self.inv_lo[k & 0xFFFF] * self.inv_hi[k >> 16]


def _grown(have: int, need: int) -> int:
    """New length of a table or buffer of ``have`` entries that must hold ``need``: doubled, but not
    far past a pass (a pass can exceed SLICE_BYTES by one string), as it is kept for good."""
    return max(need, min(2 * have, SLICE_BYTES + SLICE_BYTES // 4))


_POW = _PowerTables()


class _Scratch(threading.local):
    """A reused work buffer per thread: fresh multi-MB temporaries cost more in page faults than
    in arithmetic, and audit threads must not share one."""

    def __init__(self) -> None:
        self.buf = np.empty(0, dtype=_U)

    def get(self, n: int) -> np.ndarray:
        if len(self.buf) < n:
            self.buf = np.empty(_grown(len(self.buf), n), dtype=_U)
        return self.buf[:n]


_SCRATCH = _Scratch()


def _with_nulls(h: np.ndarray, arr: pa.Array) -> np.ndarray:
    if arr.null_count:
        valid = np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
        h = np.where(valid, h, _U(NULL_HASH))
    return h


def _offsets(arr: pa.Array) -> np.ndarray:
    """The n+1 offsets of a string/binary array, as a view of its buffer (int32, or int64 if large)."""
    large = pa.types.is_large_string(arr.type) or pa.types.is_large_binary(arr.type)
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int64 if large else np.int32)
    return offsets[arr.offset : arr.offset + len(arr) + 1]


def _hash_strings_compiled(arr: pa.Array) -> np.ndarray:
    """``_hash_strings`` in one compiled pass (sum, length, seed and mixer per string)."""
    n = len(arr)
    out = np.empty(n, dtype=_U)
    if n == 0:
        return out
    offsets, data = _offsets(arr), arr.buffers()[2]
    bad = _strhash.string_hashes(data if data is not None else b"", offsets, out, GOLD, SEED ^ TAG["str"])
    if bad >= 0:
        raise SplHfError(
            f"corrupt string array: the offsets of value {bad} ({offsets[bad]}..{offsets[bad + 1]}) "
            f"lie outside its {0 if data is None else data.size}-byte data buffer"
        )
    return _with_nulls(out, arr)


def _string_sums(arr: pa.Array, offsets: np.ndarray) -> np.ndarray:
    """sum_j (b_j + 1) P**j over each string's bytes with numpy: one multiply over the whole text
    against cached powers, segment sums, then each string's sum shifted back to its own start."""
    n = len(arr)
    base, end = int(offsets[0]), int(offsets[-1])
    total = end - base
    if total > SLICE_BYTES and n > 1:
        # Each string's sum depends on its own bytes only, so row slices are summed independently.
        cuts = np.searchsorted(offsets - base, np.arange(SLICE_BYTES, total, SLICE_BYTES), side="left")
        bounds = np.unique(np.concatenate([[0], np.clip(cuts, 1, n - 1), [n]]))
        return np.concatenate(
            [
                _string_sums(arr.slice(a, b - a), offsets[a : b + 1])
                for a, b in itertools.pairwise(bounds.tolist())
            ]
        )
    starts, lengths = offsets[:-1] - base, np.diff(offsets)
    s = np.zeros(n, dtype=_U)
    if total:
        data = np.frombuffer(arr.buffers()[2], dtype=np.uint8)[base:end]
        prod = _SCRATCH.get(total + 1)
        np.multiply(data, _POW.forward(total), out=prod[:total])
        prod[total] = 0  # a zero sentinel, so trailing empty strings index a valid element
        # Segment sums of sum_j b_j P**(global j), one reduction per string; empty strings
        # (where reduceat returns the element at their start) are masked out.
        sums = np.add.reduceat(prod, starts)
        s = np.where(lengths > 0, sums * _POW.inverse(starts), _U(0))
    # The "+1" part of sum_j (b_j + 1) P**j is a geometric series that depends on the length only,
    # so it comes from a table.
    s += _POW.geometric(int(lengths.max(initial=0)) + 1)[lengths]
    return s


def _hash_strings(arr: pa.Array) -> np.ndarray:
    if _strhash is not None:
        return _hash_strings_compiled(arr)
    n = len(arr)
    # Shortcuts that pay off against the numpy pass (not against the compiled one): constant
    # columns such as the rule-base hash or a message role...
    if n > 64 and not arr.null_count and arr[0] == arr[n - 1] and pc.all(pc.equal(arr, arr[0])).as_py():
        return np.full(n, _U(hash_value(arr[0].as_py(), arr.type)))
    # ...and few distinct values (sources, instructions, topics): hash the dictionary, then gather.
    if n > 4096 and len(pc.unique(arr.slice(0, 1024))) <= 64:
        enc = pc.dictionary_encode(arr)
        if len(enc.dictionary) <= n // 16:
            idx = enc.indices.fill_null(0).to_numpy(zero_copy_only=False)
            return _with_nulls(_hash_strings(enc.dictionary)[idx], arr)
    offsets = _offsets(arr).astype(np.int64)
    s = _string_sums(arr, offsets) if n else np.zeros(0, dtype=_U)
    s ^= np.diff(offsets).astype(_U) * _U(GOLD)
    s ^= _U(SEED ^ TAG["str"])
    return _with_nulls(_vmix(s), arr)


def _fold(h: np.ndarray, child: np.ndarray, mul: int, add: int, xor: bool = False) -> None:
    """In place: h = fmix(h * mul + child + add), or with ``xor`` h = fmix(h ^ (child + add))."""
    if _strhash is not None:
        _strhash.fold(h, child, mul, add, xor)
        return
    if xor:
        h ^= child + _U(add)
    else:
        h *= _U(mul)
        h += child
        h += _U(add)
    _vmix(h)


def hash_array(arr: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """(n,) uint64 hashes of every value of an Arrow array, equal to ``hash_value`` per value."""
    if isinstance(arr, pa.ChunkedArray):
        if arr.num_chunks == 1:
            return hash_array(arr.chunk(0))
        if arr.num_chunks == 0:
            return np.zeros(0, dtype=_U)
        return np.concatenate([hash_array(c) for c in arr.chunks])
    t = arr.type
    if pa.types.is_dictionary(t):
        return hash_array(arr.dictionary_decode())
    n = len(arr)
    if pa.types.is_null(t):
        return np.full(n, _U(NULL_HASH))
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t):
        return _hash_strings(arr)
    if pa.types.is_boolean(t) or pa.types.is_integer(t) or pa.types.is_floating(t):
        # Nulls are filled only to get a plain numpy array; their hash is replaced below.
        filled = arr.fill_null(pa.scalar(0).cast(t)) if arr.null_count else arr
        v = filled.to_numpy(zero_copy_only=False)
        if pa.types.is_floating(t):
            v, tag = v.astype(np.float64).view(_U), TAG["float"]
        else:  # two's complement words, as int(value) & MASK in hash_value
            v, tag = v.astype(np.int64).view(_U), TAG["bool"] if pa.types.is_boolean(t) else TAG["int"]
        return _with_nulls(v + _U((SEED + tag) & MASK), arr)
    if pa.types.is_struct(t):
        h = np.full(n, _U(SEED ^ TAG["struct"]))
        for k, child in enumerate(arr.flatten()):  # offset-adjusted, one array per field
            _fold(h, hash_array(child), GOLD, k)
        return _with_nulls(h, arr)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        offsets = arr.offsets.to_numpy().astype(np.int64)
        lo, hi = int(offsets[0]), int(offsets[-1])
        child = hash_array(arr.values.slice(lo, hi - lo))
        rel = offsets - lo
        lengths = np.diff(rel)
        pos = np.arange(hi - lo, dtype=np.int64) - np.repeat(rel[:-1], lengths)
        c = _vmix(child + (pos.astype(_U) + _U(1)) * _U(GOLD))
        cs = np.zeros(len(c) + 1, dtype=_U)
        np.cumsum(c, out=cs[1:])
        s = cs[rel[1:]] - cs[rel[:-1]]
        return _with_nulls(_vmix(s ^ (lengths.astype(_U) * _U(GOLD)) ^ _U(SEED ^ TAG["list"])), arr)
    raise TypeError(f"cannot hash Arrow type {t}")


def combine(field_hashes: Sequence[np.ndarray]) -> pa.Array:
    """Fold per-field (n,) hashes into one 16-hex-digit digest string per row.

    >>> digest = combine([hash_array(pa.array(["x"])), hash_array(pa.array([1], pa.int64()))])
    >>> digest.to_pylist(), combine_scalar([hash_value("x", pa.string()), hash_value(1, pa.int64())])
    (['00038992ee588d50'], '00038992ee588d50')
    """
    n = len(field_hashes[0]) if field_hashes else 0
    d = np.full(n, _U(SEED))
    for k, h in enumerate(field_hashes):
        _fold(d, h, 0, (k + 1) * GOLD & MASK, xor=True)
    hexed = binascii.hexlify(d.astype(">u8").tobytes())  # big-endian words: f"{d:016x}" back to back
    offsets = pa.py_buffer(np.arange(0, 16 * n + 1, 16, dtype=np.int32))
    return pa.StringArray.from_buffers(n, offsets, pa.py_buffer(hexed))
