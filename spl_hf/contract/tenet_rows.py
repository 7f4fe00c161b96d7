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

from spl_hf.contract.scores import pair_input_hash
from spl_hf.derive.digest import combine, hash_array
from spl_hf.derive.features import MESSAGES

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
ROW_FEATURES = Features(
    {
        "tenet": Value("string"),
        "source": Value("string"),
        "scenario_id": Value("string"),
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
    }
)
# Row fields folded into the digest (all but the digest itself).
DIGEST_TOP = ("tenet", "source", "scenario_id", "score", "prompt", "chosen", "rejected")
DIGEST_DERIVATION = ("pair_id", "prompt_id", "row_id", "chosen_side", "judge", "threshold", "capacity", "seed")


def row_digests(table: pa.Table) -> pa.Array:
    der = table.column("derivation").combine_chunks()
    hashes = [hash_array(table.column(c)) for c in DIGEST_TOP]
    hashes += [hash_array(pc.struct_field(der, f)) for f in DIGEST_DERIVATION]
    return combine(hashes)


def score_index(scores: pa.Table) -> dict[tuple[str, str], int]:
    """(pair_id, tenet) -> row of the judge score table."""
    return {k: i for i, k in enumerate(zip(scores.column("pair_id").to_pylist(), scores.column("tenet").to_pylist()))}


# json.dumps(ensure_ascii=False) escapes exactly these: backslash first, so later escapes survive.
_JSON_ESCAPES = (("\\", "\\\\"), ('"', '\\"'), ("\n", "\\n"), ("\r", "\\r"), ("\t", "\\t"), ("\b", "\\b"),
                 ("\f", "\\f"))
_OTHER_CONTROL = [chr(i) for i in range(0x20) if chr(i) not in "\n\r\t\b\f"]


def json_string_bodies(values: pa.Array) -> pa.Array:
    """Each string as ``json.dumps(ensure_ascii=False)`` writes it, without the enclosing quotes."""
    out = values
    for raw, escaped in _JSON_ESCAPES:
        if pc.any(pc.match_substring(out, raw)).as_py():  # a search is cheaper than a rewrite
            out = pc.replace_substring(out, raw, escaped)
    if pc.any(pc.match_substring_regex(out, "[\\x00-\\x07\\x0b\\x0e-\\x1f]")).as_py():
        for ch in _OTHER_CONTROL:
            out = pc.replace_substring(out, ch, f"\\u{ord(ch):04x}")
    return out


def _messages_json(messages: pa.Array) -> pa.Array:
    """Each message list as the JSON :func:`pair_input_hash` writes (``[{"role":…,"content":…},…]``, no brackets)."""
    flat = pc.list_flatten(messages)
    items = pc.binary_join_element_wise(
        '{"role":"', json_string_bodies(pc.struct_field(flat, "role")),
        '","content":"', json_string_bodies(pc.struct_field(flat, "content")), '"}', "",
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
    return flat.take(pa.array(starts, mask=lengths == 0)) if len(flat) else pa.nulls(len(messages), pa.string())


def input_hashes(messages: pa.Array, response_a: pa.Array, response_b: pa.Array) -> pa.Array:
    """Vectorised :func:`pair_input_hash` (null where an input is null): the JSON is built column-wise,
    so only the SHA-256 itself runs per row."""
    blob = pc.binary_join_element_wise(
        "[[", _messages_json(messages), '],"', json_string_bodies(response_a), '","',
        json_string_bodies(response_b), '"]', "",
    )
    digests = [None if b is None else hashlib.sha256(b).hexdigest() for b in blob.cast(pa.binary()).to_pylist()]
    return pa.array(digests, pa.string())


def oriented_input_hashes_arrow(prompt: pa.Array, chosen: pa.Array, rejected: pa.Array, side: pa.Array) -> pa.Array:
    """Vectorised :func:`oriented_input_hashes`; a row whose texts are missing gets a null hash."""
    c_text, r_text = first_content(chosen), first_content(rejected)
    a_first = pc.equal(side, "a").fill_null(False)
    return input_hashes(prompt, pc.if_else(a_first, c_text, r_text), pc.if_else(a_first, r_text, c_text))


def check_inputs(pairs: pa.Table, scores: pa.Table, source: str) -> None:
    """Pairs and scores must describe the same judged texts; raises naming the rows."""
    pair_ids = pairs.column("pair_id").to_pylist()
    seen: dict[str, int] = {}
    dup = [(i, p) for i, p in enumerate(pair_ids) if seen.setdefault(p, i) != i]
    if dup:
        raise ValueError(f"pair rows repeat pair_ids: {dup[:5]}")
    pair_index = {p: i for i, p in enumerate(pair_ids)}
    s_pairs = scores.column("pair_id").to_pylist()
    absent = [(i, p) for i, p in enumerate(s_pairs) if p not in pair_index]
    if absent:
        raise ValueError(f"{source}: score rows name pairs absent from the pair rows: {absent[:5]}")
    rows = pa.array([pair_index[p] for p in s_pairs], pa.int64())
    wrong_prompt = np.flatnonzero(~np.asarray(pc.equal(scores.column("prompt_id"),
                                                       pairs.column("prompt_id").take(rows)).fill_null(False)))
    if len(wrong_prompt):
        raise ValueError(f"{source}: score rows {wrong_prompt[:5].tolist()} have a prompt_id that differs "
                         "from their pair row")
    hashes = [pair_input_hash(m, a, b) for m, a, b in zip(
        pairs.column("prompt").to_pylist(), pairs.column("response_a").to_pylist(), pairs.column("response_b").to_pylist())]
    expected = pa.array(hashes, pa.string()).take(rows)
    wrong_text = np.flatnonzero(~np.asarray(pc.equal(scores.column("input_sha256"), expected).fill_null(False)))
    if len(wrong_text):
        raise ValueError(f"{source}: score rows {wrong_text[:5].tolist()} were judged on other texts than "
                         "their pair rows hold (input_sha256 differs)")
