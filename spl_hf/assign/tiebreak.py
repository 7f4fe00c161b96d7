"""Seeded, platform-independent tie-break keys for (pair, tenet) entries.

key(seed, pair, tenet) = splitmix64(splitmix64(splitmix64(seed) XOR fnv1a64(pair)) XOR fnv1a64(tenet))

where fnv1a64 hashes the UTF-8 bytes of the id's string form (integer ids are hashed as their decimal
text) and splitmix64 is Steele, Lea & Flood's 64-bit finaliser. Everything is uint64 arithmetic
modulo 2**64, so any implementation reproduces the keys exactly from the ids and the seed.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)


def splitmix64(x: np.ndarray) -> np.ndarray:
    z = np.asarray(x, dtype=np.uint64)
    with np.errstate(over="ignore"):
        z = z + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def fnv1a64(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """FNV-1a of each value's UTF-8 text, vectorised over byte positions."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)):
        values = pc.cast(values, pa.string())
    values = pc.cast(values, pa.large_string())
    _, offsets_buf, data_buf = values.buffers()
    offsets = np.frombuffer(offsets_buf, dtype=np.int64)[values.offset : values.offset + len(values) + 1]
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, np.uint8)
    starts, lengths = offsets[:-1], np.diff(offsets)
    h = np.full(len(values), _FNV_OFFSET, dtype=np.uint64)
    longest = int(lengths.max()) if len(lengths) else 0
    with np.errstate(over="ignore"):
        for j in range(longest):
            live = np.flatnonzero(lengths > j)
            h[live] = (h[live] ^ data[starts[live] + j].astype(np.uint64)) * _FNV_PRIME
    return h


def tie_keys(seed: int, pair_hash: np.ndarray, tenet_hash: np.ndarray) -> np.ndarray:
    """uint64 key per entry from per-entry pair and tenet hashes (see module docstring)."""
    base = splitmix64(np.array([seed], dtype=np.uint64))[0]
    return splitmix64(splitmix64(pair_hash ^ base) ^ tenet_hash)
