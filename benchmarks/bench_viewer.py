"""Benchmark of the release viewer's first page on a card-scale tenet release (synthetic rows).

Writes a release folder shaped like the v3 card (49 tenets × 4,000 rows = 196,000 rows, per-tenet
files listed by config `all`), then times, each in a fresh subprocess (cold: nothing cached):

- viewer: open the release, build the rows index (Arrow) and render the first page;
- filtered: the same, then a page filtered by tenet, score range and a text search;
- baseline: what a viewer that holds rows as Python objects pays first (every row of `all` read
  and turned into dicts), the approach the viewer avoids.

    .venv/bin/python benchmarks/bench_viewer.py                 # 196,000 rows
    .venv/bin/python benchmarks/bench_viewer.py --tenets 10 --per_tenet 1000
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import yaml

WORDS = [
    "the",
    "a",
    "safe",
    "answer",
    "risk",
    "help",
    "how",
    "to",
    "cook",
    "plan",
    "budget",
    "travel",
    "learn",
    "code",
    "write",
    "explain",
    "why",
    "when",
]


def _texts(rng: np.random.Generator, n: int, words: int) -> list[str]:
    picks = rng.integers(0, len(WORDS), size=(n, words))
    return [" ".join(WORDS[i] for i in row) for row in picks]


def _messages(role: str, texts: list[str]) -> pa.Array:
    return pa.array([[{"role": role, "content": t}] for t in texts])


def write_release(folder: Path, tenets: int, per_tenet: int, seed: int = 0) -> int:
    """A tenet release with the row schema of spl_hf (synthetic values); returns its row count."""
    from spl_hf.contract import ROW_FEATURES

    rng = np.random.default_rng(seed)
    schema = ROW_FEATURES.arrow_schema
    names = [f"tenet_{k:02d}" for k in range(tenets)]
    for k, name in enumerate(names):
        n = per_tenet
        p1, p2 = rng.random(n), rng.random(n)
        ids = [f"pool_{k * n + i}" for i in range(n)]
        der = pa.array(
            [
                {
                    "pair_id": ids[i], "prompt_id": f"{k * n + i:064x}", "row_id": k * n + i,
                    "chosen_side": "a" if p1[i] > p2[i] else "b",
                    "judge": {"p_a_first": float(p1[i]), "p_a_second": float(p2[i]), "mass_first": 0.9,
                              "mass_second": 0.9, "model_id": "judge", "model_revision": "r",
                              "template_hash": "t", "input_sha256": "0" * 64},
                    "threshold": 0.0, "capacity": n, "seed": 42, "digest": "0" * 16,
                }
                for i in range(n)
            ],
            schema.field("derivation").type,
        )  # fmt: skip
        table = pa.table(
            {
                "tenet": pa.array([name] * n, pa.large_string()),
                "source": pa.array(["pool"] * n, pa.large_string()),
                "scenario_id": pa.array([f"{name}_{x}" for x in ids], pa.large_string()),
                "score": pa.array(np.abs(p1 - p2)),
                "prompt": _messages("user", _texts(rng, n, 30)),
                "chosen": _messages("assistant", _texts(rng, n, 80)),
                "rejected": _messages("assistant", _texts(rng, n, 80)),
                "derivation": der,
            }
        ).cast(schema)
        (folder / name).mkdir(parents=True, exist_ok=True)
        pq.write_table(table, folder / name / "pool-00000-of-00001.parquet")
    configs = [
        {
            "config_name": "all",
            "default": True,
            "data_files": [{"split": "train", "path": [f"{t}/pool-*" for t in names]}],
        }
    ]
    configs += [{"config_name": t, "data_files": [{"split": "pool", "path": f"{t}/pool-*"}]} for t in names]
    (folder / "README.md").write_text(f"---\n{yaml.safe_dump({'configs': configs})}---\n# synthetic\n")
    (folder / "build_report.json").write_text(json.dumps({"kind": "tenets"}))
    (folder / "card.json").write_text(json.dumps({"kwargs": {"kept": [[t, "a tenet"] for t in names]}}))
    return tenets * per_tenet


PROBE = """
import sys, time, json
t0 = time.perf_counter()
from spl_hf.explain import open_release
from spl_hf.view import RowFilter, rows_index
mode, path = sys.argv[1], sys.argv[2]
imports = time.perf_counter() - t0
t0 = time.perf_counter()
with open_release(path) as release:
    if mode == "baseline":
        rows = release.dataset("all", "train").to_table().to_pylist()
        first, n = rows[:50], len(rows)
    else:
        index = rows_index(release)
        page = index.page(RowFilter(), 0, 50)
        first, n = page.rows, page.matched
    t1 = time.perf_counter()
    extra = None
    if mode == "filtered":
        hit = index.page(RowFilter(tenet="tenet_03", score_min=0.2, text="budget"), 0, 50)
        extra = {"matched": hit.matched, "seconds": time.perf_counter() - t1}
print(json.dumps({"seconds": t1 - t0, "imports": imports, "rows": n, "shown": len(first), "filtered": extra}))
"""


def timed(mode: str, folder: Path) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, mode, str(folder)], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tenets", type=int, default=49)
    ap.add_argument("--per_tenet", type=int, default=4000)
    ap.add_argument("--tiny", action="store_true", help="tiny sizes: a smoke run (the test suite runs it)")
    args = ap.parse_args()
    if args.tiny:
        args.tenets, args.per_tenet = 3, 50
    with tempfile.TemporaryDirectory(prefix="bench-viewer-") as tmp:
        t0 = time.perf_counter()
        n = write_release(Path(tmp), args.tenets, args.per_tenet)
        print(f"synthetic release: {n} rows written in {time.perf_counter() - t0:.1f} s")
        viewer = timed("viewer", Path(tmp))
        filtered = timed("filtered", Path(tmp))
        baseline = timed("baseline", Path(tmp))
    print(
        f"viewer first page (open + rows index + page 1 of {viewer['rows']} rows): {viewer['seconds']:.2f} s "
        f"(+ {viewer['imports']:.2f} s of imports, paid once when the server starts)"
    )
    f = filtered["filtered"]
    print(
        f"filtered page (tenet + score range + text search, {f['matched']} match): {f['seconds'] * 1000:.0f} ms"
    )
    print(f"baseline (every row as Python objects, same imports excluded): {baseline['seconds']:.2f} s")
    print(f"ratio baseline / viewer first page: {baseline['seconds'] / viewer['seconds']:.1f}x")


if __name__ == "__main__":
    main()
