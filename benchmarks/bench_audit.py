"""Audit verification throughput: vectorised (Arrow/numpy) versus a per-row Python loop.

Builds N synthetic derived SPL rows (default 1,000,000), verifies all of them with
``audit_batches`` and a subset with the per-row reference path (``derive_row`` plus field
comparison), in the same process, and prints rows/s for both and their ratio.
Targets: >= 1,000,000 rows/s vectorised and >= 20x the loop.

    python benchmarks/bench_audit.py [--rows 1000000] [--loop_rows 20000] [--text_scale 1.0]

Throughput depends on the text bytes per row (every byte is hashed for the digest); the
default rows carry ~420 bytes, like the shipped sample's 1-4 sentence responses.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from spl_hf.audit import audit_batches
from spl_hf.contract import digest
from spl_hf.derive import PRODUCER_FIELDS, derive_row, derive_table, pair_features
from spl_hf.rules import default_rulebase

WORDS = [
    "the",
    "quick",
    "brown",
    "fox",
    "explains",
    "photosynthesis",
    "history",
    "chemistry",
    "safely",
    "why",
    "how",
    "what",
    "when",
    "please",
    "describe",
    "steps",
    "for",
    "a",
    "story",
    "about",
    "research",
    "a",
    "careful",
    "answer",
    "refuses",
    "politely",
]


def _texts(rng: np.random.Generator, n_pool: int, lo: int, hi: int) -> pa.Array:
    out = []
    for _ in range(n_pool):
        k = int(rng.integers(lo, hi))
        out.append(" ".join(rng.choice(WORDS, size=k)))
    return pa.array(out)


def synthetic_pairs(n: int, seed: int = 0, text_scale: float = 1.0) -> pa.Table:
    """Rows like the shipped sample: prompts of 8-25 words, responses of 10-40 (times ``text_scale``)."""
    rng = np.random.default_rng(seed)

    def span(lo: int, hi: int) -> tuple[int, int]:
        return max(1, round(lo * text_scale)), max(2, round(hi * text_scale))

    rb = default_rulebase()
    idx = pa.array(np.arange(n))
    pid = pc.binary_join_element_wise("pair", pc.cast(idx, pa.string()), "-")
    prompt_id = pc.binary_join_element_wise("prompt", pc.cast(pa.array(np.arange(n) // 3), pa.string()), "-")
    prompts = _texts(rng, 5000, *span(8, 25)).take(pa.array(rng.integers(0, 5000, n)))
    resp_a = _texts(rng, 5000, *span(10, 40)).take(pa.array(rng.integers(0, 5000, n)))
    resp_b = _texts(rng, 5000, *span(10, 40)).take(pa.array(rng.integers(0, 5000, n)))
    topics = pa.array(rb.schema.attribute("topic").values).take(pa.array(rng.integers(0, 10, n)))

    def bools(p_null: float = 0.0) -> pa.Array:
        v = rng.random(n) < 0.5
        return pa.array(v, mask=rng.random(n) < p_null if p_null else None)

    prompt_attrs = pa.StructArray.from_arrays(
        [topics] + [bools(0.001) for _ in range(5)], names=list(rb.schema.names("prompt"))
    )
    resp = [
        pa.StructArray.from_arrays([bools() for _ in range(4)], names=list(rb.schema.names("response")))
        for _ in range(2)
    ]
    status = pa.StructArray.from_arrays(
        [pa.array(np.full(n, "ok", dtype=object))] * 3, names=["prompt", "response_a", "response_b"]
    )
    msgs = pa.ListArray.from_arrays(
        pa.array(np.arange(n + 1, dtype=np.int32)),
        pa.StructArray.from_arrays(
            [pa.array(np.full(n, "user", dtype=object)), prompts], names=["role", "content"]
        ),
    )
    cols = {
        "pair_id": pid,
        "prompt_id": prompt_id,
        "source": pa.array(
            np.array(["ultrachat", "or_bench_80k", "harmbench"], dtype=object)[rng.integers(0, 3, n)]
        ),
        "source_category": pa.array(
            np.array(["benign", "over_refusal_prone", "harmful"], dtype=object)[rng.integers(0, 3, n)]
        ),
        "prompt": msgs,
        "response_a": resp_a,
        "response_b": resp_b,
        "instruction_a": pa.array(
            np.array(["comply", "refuse", "none"], dtype=object)[rng.integers(0, 3, n)]
        ),
        "instruction_b": pa.array(
            np.array(["comply", "refuse", "none"], dtype=object)[rng.integers(0, 3, n)]
        ),
        "prompt_attributes": prompt_attrs,
        "response_a_attributes": resp[0],
        "response_b_attributes": resp[1],
        "attribute_status": status,
        # Two labelers and one generator, as short identity keys (the build report lists their identities).
        "producers": pa.StructArray.from_arrays(
            [
                pa.array(
                    np.array(["labeler0000000a", "labeler0000000b"], dtype=object)[rng.integers(0, 2, n)]
                )
                for _ in PRODUCER_FIELDS
            ],
            names=list(PRODUCER_FIELDS),
        ),
    }
    return pa.Table.from_pydict(cols).cast(pair_features(rb.schema).arrow_schema)


def loop_verify(rows: list[dict], rb) -> int:
    ok = 0
    for row in rows:
        stored = row["derivation"]
        components = {k: row[k] for k in pair_features(rb.schema)}
        redo = derive_row(components, rb, stored["margin"])
        if (
            redo["derivation"] == stored
            and redo["chosen"] == row["chosen"]
            and redo["rejected"] == row["rejected"]
        ):
            ok += 1
    return ok


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--loop_rows", type=int, default=20_000)
    ap.add_argument("--batch_size", type=int, default=32_768)
    ap.add_argument("--workers", type=int, default=None, help="audit threads (default: CPU count)")
    ap.add_argument("--text_scale", type=float, default=1.0, help="scale the synthetic text lengths")
    ap.add_argument("--tiny", action="store_true", help="tiny sizes: a smoke run (the test suite runs it)")
    args = ap.parse_args()
    if args.tiny:
        args.rows, args.loop_rows = 20_000, 1_000
    rb = default_rulebase()

    t0 = time.perf_counter()
    pairs = synthetic_pairs(args.rows, text_scale=args.text_scale)
    t1 = time.perf_counter()
    derived = pa.concat_tables(
        [derive_table(pairs.slice(i, args.batch_size), rb) for i in range(0, args.rows, args.batch_size)]
    )
    t2 = time.perf_counter()
    text_bytes = sum(
        pc.sum(pc.binary_length(derived.column(c))).as_py() for c in ("response_a", "response_b")
    )
    text_bytes += pc.sum(
        pc.binary_length(pc.list_flatten(derived.column("prompt")).combine_chunks().field("content"))
    ).as_py()
    print(
        f"synthetic rows: {args.rows:,} ({text_bytes / args.rows:.0f} text bytes/row), built in {t1 - t0:.1f} s; "
        f"derivation {args.rows / (t2 - t1):,.0f} rows/s"
    )

    t3 = time.perf_counter()
    report = audit_batches(derived, rb, batch_size=args.batch_size, workers=args.workers)
    t4 = time.perf_counter()
    assert report.ok and report.reproduced == args.rows, report.mismatches[:3]
    vec_rate = args.rows / (t4 - t3)

    sub = derived.slice(0, args.loop_rows).to_pylist()
    t5 = time.perf_counter()
    ok = loop_verify(sub, rb)
    t6 = time.perf_counter()
    assert ok == len(sub)
    loop_rate = len(sub) / (t6 - t5)

    threads = args.workers or os.cpu_count()
    print(
        f"vectorised audit : {vec_rate:12,.0f} rows/s  ({args.rows:,} rows in {t4 - t3:.2f} s, {threads} threads; "
        f"digest kernel: {digest.KERNEL})"
    )
    print(
        f"per-row loop     : {loop_rate:12,.0f} rows/s  ({len(sub):,} rows in {t6 - t5:.2f} s; rows pre-converted to dicts)"
    )
    print(f"ratio            : {vec_rate / loop_rate:12.1f}x")
    print(
        f"targets          : >= 1,000,000 rows/s: {'met' if vec_rate >= 1e6 else 'NOT met'}; "
        f">= 20x loop: {'met' if vec_rate / loop_rate >= 20 else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
