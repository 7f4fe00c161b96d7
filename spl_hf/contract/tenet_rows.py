"""The per-tenet DPO row contract: row and score schemas, the row digest, and judged-input hashes.

The tenet build writes rows with these Features and digests; the audit recomputes the same
digests and hashes from what the build stored. Both import them from here (never from each
other), so the contract has one definition and no model or I/O code.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from datasets import Features, Value

from spl_hf.contract.digest import combine, hash_array
from spl_hf.contract.messages import MESSAGES
from spl_hf.contract.scores import pair_input_hash
from spl_hf.errors import SplHfError
from spl_hf.held import equals_taken, index_in, plain_type

CERTIFICATE_FILE = "assignment_certificate.json"

JUDGE_FIELDS = {
    "p_a_first": Value("float64"),
    "p_a_second": Value("float64"),
    "mass_first": Value("float64"),
    "mass_second": Value("float64"),
    "model_id": Value("string"),
    "model_revision": Value("string"),
    "template_hash": Value("string"),
    "input_sha256": Value("string"),  # sha256 of the judged conversation and responses (A/B order)
}
# tenet, source and scenario_id are large_string as in the v3 card's schema, so a release concatenates
# with that card's rows (datasets.concatenate_datasets) without a cast.
ROW_FEATURES = Features(
    {
        "tenet": Value("large_string"),
        "source": Value("large_string"),
        "scenario_id": Value("large_string"),
        "score": Value("float64"),
        "prompt": MESSAGES,
        "chosen": MESSAGES,
        "rejected": MESSAGES,
        "derivation": {
            "pair_id": Value("string"),
            "prompt_id": Value("string"),
            "row_id": Value("int64"),
            "chosen_side": Value("string"),
            "judge": JUDGE_FIELDS,
            "threshold": Value("float64"),
            "capacity": Value("int64"),
            "seed": Value("int64"),
            "digest": Value("string"),
        },
    }
)
SCORE_FEATURES = Features(
    {
        "pair_id": Value("string"),
        "prompt_id": Value("string"),
        "source": Value("string"),
        "tenet": Value("string"),
        "score": Value("float64"),
        **JUDGE_FIELDS,
        # The pool's own preference of the pair ("a", "b", "tie", or null where it states none), carried
        # from the pair rows so that the judge's agreement with it is recomputable from the release.
        "source_preference": Value("string"),
    }
)
# What the judge stage writes: the released score rows less what the build adds from the pair rows.
JUDGED_SCORE_COLUMNS = tuple(k for k in SCORE_FEATURES if k != "source_preference")
# Row fields folded into the digest (all but the digest itself).
DIGEST_TOP = ("tenet", "source", "scenario_id", "score", "prompt", "chosen", "rejected")
DIGEST_DERIVATION = (
    "pair_id",
    "prompt_id",
    "row_id",
    "chosen_side",
    "judge",
    "threshold",
    "capacity",
    "seed",
)


def row_digests(table: pa.Table) -> pa.Array:
    der = table.column("derivation").combine_chunks()
    hashes = [hash_array(table.column(c)) for c in DIGEST_TOP]
    hashes += [hash_array(pc.struct_field(der, f)) for f in DIGEST_DERIVATION]
    return combine(hashes)


def score_index(scores: pa.Table) -> dict[tuple[str, str], int]:
    """(pair_id, tenet) -> row of the judge score table."""
    return {
        k: i
        for i, k in enumerate(zip(scores.column("pair_id").to_pylist(), scores.column("tenet").to_pylist()))
    }


# json.dumps(ensure_ascii=False) escapes exactly these: backslash first, so later escapes survive.
_JSON_ESCAPES = (
    ("\\", "\\\\"),
    ('"', '\\"'),
    ("\n", "\\n"),
    ("\r", "\\r"),
    ("\t", "\\t"),
    ("\b", "\\b"),
    ("\f", "\\f"),
)
_OTHER_CONTROL = [chr(i) for i in range(0x20) if chr(i) not in "\n\r\t\b\f"]


def json_string_bodies(values: pa.Array) -> pa.Array:
    """Each string as ``json.dumps(ensure_ascii=False)`` writes it, without the enclosing quotes."""
    present = _escaped_bytes(values)
    out = values
    # A replacement only adds backslashes and letters, so what each step finds is in the input.
    for raw, escaped in _JSON_ESCAPES:
        found = ord(raw) in present if present is not None else pc.any(pc.match_substring(out, raw)).as_py()
        if found:
            out = pc.replace_substring(out, raw, escaped)
    if present is not None:
        found = not present.isdisjoint(_OTHER_CONTROL_BYTES)
    else:
        found = pc.any(pc.match_substring_regex(out, "[\\x00-\\x07\\x0b\\x0e-\\x1f]")).as_py()
    if found:
        for ch in _OTHER_CONTROL:
            out = pc.replace_substring(out, ch, f"\\u{ord(ch):04x}")
    return out


_OTHER_CONTROL_BYTES = frozenset(map(ord, _OTHER_CONTROL))
_SCAN_BYTES = 1 << 24  # text scanned per step, which bounds the scan's temporary masks


def _escaped_bytes(values: pa.Array) -> frozenset[int] | None:
    """The bytes JSON escapes (controls, quote, backslash) that occur in a string array; None when
    the array is of another kind.

    One pass over the text buffer instead of a substring search per escape: UTF-8 never uses these
    byte values inside a multi-byte character, so a byte found is that character.
    """
    if not isinstance(values, pa.Array) or not (
        pa.types.is_string(values.type) or pa.types.is_large_string(values.type)
    ):
        return None
    if len(values) == 0:
        return frozenset()
    bufs = values.buffers()
    offsets = np.frombuffer(bufs[1], dtype=np.int64 if pa.types.is_large_string(values.type) else np.int32)
    lo, hi = int(offsets[values.offset]), int(offsets[values.offset + len(values)])
    if bufs[2] is None or hi <= lo:
        return frozenset()
    data = np.frombuffer(bufs[2], dtype=np.uint8)[lo:hi]
    found: set[int] = set()
    for start in range(0, len(data), _SCAN_BYTES):
        part = data[start : start + _SCAN_BYTES]
        found.update(np.unique(part[(part < 0x20) | (part == ord('"')) | (part == ord("\\"))]).tolist())
    return frozenset(found)


def _messages_json(messages: pa.Array) -> pa.Array:
    """Each message list as the JSON :func:`pair_input_hash` writes (``[{"role":…,"content":…},…]``, no brackets)."""
    flat = pc.list_flatten(messages)
    items = pc.binary_join_element_wise(
        '{"role":"',
        json_string_bodies(pc.struct_field(flat, "role")),
        '","content":"',
        json_string_bodies(pc.struct_field(flat, "content")),
        '"}',
        "",
    )
    lengths = pc.list_value_length(messages).fill_null(0).to_numpy(zero_copy_only=False).astype(np.int32)
    offsets = pa.array(np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32))
    lists = pa.ListArray.from_arrays(offsets, items, mask=messages.is_null())
    return pc.binary_join(lists, ",")


def first_content(messages: pa.Array) -> pa.Array:
    """``content`` of each list's first message; null where the list is null or empty."""
    lengths = pc.list_value_length(messages).fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    flat = pc.struct_field(pc.list_flatten(messages), "content")
    return (
        flat.take(pa.array(starts, mask=lengths == 0)) if len(flat) else pa.nulls(len(messages), pa.string())
    )


def input_hashes(messages: pa.Array, response_a: pa.Array, response_b: pa.Array) -> pa.Array:
    """Vectorised :func:`pair_input_hash` (null where an input is null): the JSON is built column-wise,
    so only the SHA-256 itself runs per row. A slice of rows at a time, so that the JSON of only so
    many rows is held (the audit hashes every released row: at the card, 1.8 GB of JSON at once)."""
    if len(messages) > HASH_SLICE_ROWS:
        return pa.concat_arrays(
            [
                _input_hashes(
                    messages.slice(i, HASH_SLICE_ROWS),
                    response_a.slice(i, HASH_SLICE_ROWS),
                    response_b.slice(i, HASH_SLICE_ROWS),
                )
                for i in range(0, len(messages), HASH_SLICE_ROWS)
            ]
        )
    return _input_hashes(messages, response_a, response_b)


def _input_hashes(messages: pa.Array, response_a: pa.Array, response_b: pa.Array) -> pa.Array:
    blob = pc.binary_join_element_wise(
        "[[",
        _messages_json(messages),
        '],"',
        json_string_bodies(response_a),
        '","',
        json_string_bodies(response_b),
        '"]',
        "",
    )
    digests = [
        None if b is None else hashlib.sha256(b).hexdigest() for b in blob.cast(pa.binary()).to_pylist()
    ]
    return pa.array(digests, pa.string())


def oriented_input_hashes_arrow(
    prompt: pa.Array, chosen: pa.Array, rejected: pa.Array, side: pa.Array
) -> pa.Array:
    """Vectorised :func:`oriented_input_hashes`; a row whose texts are missing gets a null hash."""
    c_text, r_text = first_content(chosen), first_content(rejected)
    a_first = pc.equal(side, "a").fill_null(False)
    return input_hashes(prompt, pc.if_else(a_first, c_text, r_text), pc.if_else(a_first, r_text, c_text))


def check_inputs(pairs: pa.Table, scores: pa.Table, source: str, hashes: pa.Array | None = None) -> pa.Array:
    """Pairs and scores must describe the same judged texts; raises naming the rows. Returns the pair
    row of each score row (what a build joins on next). ``hashes``: :func:`pair_hashes` of the pair
    rows, where the caller computed them from their texts (then ``pairs`` need not hold the texts)."""
    rows = _score_pair_rows(pairs, scores, source)
    wrong_prompt = np.flatnonzero(
        ~np.asarray(
            equals_taken(
                scores.column("prompt_id"), pairs.column("prompt_id").combine_chunks(), rows
            ).fill_null(False)
        )
    )
    if len(wrong_prompt):
        raise SplHfError(
            f"{source}: score rows {wrong_prompt[:5].tolist()} have a prompt_id that differs "
            "from their pair row"
        )
    wrong_text = np.flatnonzero(
        ~np.asarray(
            equals_taken(
                scores.column("input_sha256"), pair_hashes(pairs) if hashes is None else hashes, rows
            ).fill_null(False)
        )
    )
    if len(wrong_text):
        raise SplHfError(
            f"{source}: score rows {wrong_text[:5].tolist()} were judged on other texts than "
            "their pair rows hold (input_sha256 differs)"
        )
    return rows


def _score_pair_rows(pairs: pa.Table, scores: pa.Table, source: str) -> pa.Array:
    """The pair row of each score row; raises naming repeated pair ids or score rows without a pair.

    An Arrow hash lookup when the pair ids are distinct, non-null strings or integers of the scores'
    type; anything else goes the per-row way below, which defines the checks and their messages.
    """
    pair_ids = pairs.column("pair_id").combine_chunks()
    s_pairs = scores.column("pair_id").combine_chunks()
    kind = pair_ids.type
    if (
        (pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_integer(kind))
        and kind == plain_type(s_pairs.type)
        and not pair_ids.null_count
        and not s_pairs.null_count
        and pc.count_distinct(pair_ids).as_py() == len(pair_ids)
    ):
        rows = index_in(s_pairs, pair_ids)
        if not rows.null_count:
            return rows.cast(pa.int64())
    return _score_pair_rows_per_row(pair_ids.to_pylist(), s_pairs.to_pylist(), source)


def _score_pair_rows_per_row(pair_ids: list, s_pairs: list, source: str) -> pa.Array:
    seen: dict[str, int] = {}
    dup = [(i, p) for i, p in enumerate(pair_ids) if seen.setdefault(p, i) != i]
    if dup:
        raise SplHfError(f"pair rows repeat pair_ids: {dup[:5]}")
    pair_index = {p: i for i, p in enumerate(pair_ids)}
    absent = [(i, p) for i, p in enumerate(s_pairs) if p not in pair_index]
    if absent:
        raise SplHfError(f"{source}: score rows name pairs absent from the pair rows: {absent[:5]}")
    return pa.array([pair_index[p] for p in s_pairs], pa.int64())


# Pair rows hashed per pass: the judged-input JSON of a slice lives in memory while it is hashed.
HASH_SLICE_ROWS = 1 << 15


def pair_hashes(pairs: pa.Table) -> pa.Array:
    """:func:`pair_input_hash` of every pair row.

    Column-wise (:func:`input_hashes`) when the texts are non-null strings, where it is the same
    function; per row otherwise, so null or oddly typed inputs fail exactly as the definition does.
    """
    prompt, a, b = (pairs.column(c).combine_chunks() for c in ("prompt", "response_a", "response_b"))
    if _plain_texts(prompt, a, b):
        return input_hashes(prompt, a, b)  # a slice of rows at a time
    hashes = [pair_input_hash(m, x, y) for m, x, y in zip(prompt.to_pylist(), a.to_pylist(), b.to_pylist())]
    return pa.array(hashes, pa.string())


def _plain_texts(prompt: pa.Array, a: pa.Array, b: pa.Array) -> bool:
    """Message lists of non-null string roles and contents, and non-null string responses."""
    if not pa.types.is_list(prompt.type) or not pa.types.is_struct(prompt.type.value_type):
        return False
    names = {f.name: f.type for f in prompt.type.value_type}
    if "role" not in names or "content" not in names:
        return False
    if not all(pa.types.is_string(t) for t in (names["role"], names["content"], a.type, b.type)):
        return False
    flat = pc.list_flatten(prompt)
    return not (
        prompt.null_count
        or flat.null_count
        or a.null_count
        or b.null_count
        or pc.struct_field(flat, "role").null_count
        or pc.struct_field(flat, "content").null_count
    )
