"""Benchmark of the tenet audit on a synthetic card-scale release.

Three phases, each in a fresh subprocess so peak memory is the phase's own:

1. ``build`` (skipped when the folder exists): a card-shaped score table (`spl_hf.assign.synthetic`,
   334,610 pairs, 60 tenets of which 11 cannot fill the capacity), judge probabilities whose
   difference is the score, pair rows with texts and their judged-input hashes, then the real
   builder (`build_tenets`: assignment, row assembly, certificate, card, manifest) at capacity 4,000:
   49 kept tenets, 196,000 rows, every judged row in `judge_scores`.
2. ``audit``: `audit_tenet_build` end to end (read every file from disk, manifest, one vectorised
   pass over all row splits, certificate) — seconds and peak RSS against the targets (60 s, 4 GB).
3. ``compare``: the pre-vectorisation `check_rows` (kept below as the baseline: a Python dict over
   every judged row, rebuilt per split, and per-row hashing) against today's on the first
   ``--slice_splits`` row splits, both over the full judge score table; same verdicts asserted.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_audit_tenets.py               # card scale
    PYTHONPATH=. .venv/bin/python benchmarks/bench_audit_tenets.py --pairs 30000 # quick
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

BASELINE_TOLERANCE = 1e-12


# --- baseline: check_rows as it was before the vectorised audit (kept verbatim but for imports) ---


def _old_field(der: pa.Array, *names: str) -> pa.Array:
    for name in names:
        der = pc.struct_field(der, name)
    return der


def old_oriented_input_hashes(
    prompt: pa.Array, chosen: pa.Array, rejected: pa.Array, side: list
) -> list[str]:
    from spl_hf.contract import pair_input_hash

    out = []
    for p, c, r, s in zip(prompt.to_pylist(), chosen.to_pylist(), rejected.to_pylist(), side):
        c_text, r_text = (c or [{}])[0].get("content"), (r or [{}])[0].get("content")
        a, b = (c_text, r_text) if s == "a" else (r_text, c_text)
        out.append(pair_input_hash(p or [], a or "", b or ""))
    return out


def old_check_rows(table: pa.Table, scores: pa.Table, cert) -> dict[str, np.ndarray]:
    from spl_hf.contract import JUDGE_FIELDS, row_digests, score_index, scores_from_probs

    _field = _old_field
    der = table.column("derivation").combine_chunks()
    p1 = _field(der, "judge", "p_a_first").to_numpy(zero_copy_only=False)
    p2 = _field(der, "judge", "p_a_second").to_numpy(zero_copy_only=False)
    raw = scores_from_probs(p1, p2)
    score = table.column("score").to_numpy()
    side = _field(der, "chosen_side").to_pylist()
    threshold = _field(der, "threshold").to_numpy(zero_copy_only=False)
    checks = {
        "score": ~(np.abs(np.abs(raw) - score) <= BASELINE_TOLERANCE),
        "chosen_side": np.array([s != ("a" if r > 0 else "b") for s, r in zip(side, raw)], dtype=bool),
        "threshold": ~(score >= threshold),
        "digest": np.asarray(
            pc.invert(pc.equal(_field(der, "digest"), row_digests(table)).fill_null(False)), dtype=bool
        ),
    }
    expected_scenario = pc.binary_join_element_wise(
        table.column("tenet"),
        table.column("source"),
        pc.cast(_field(der, "row_id"), pa.large_string()),
        pa.scalar("_", pa.large_string()),
    )
    checks["scenario_id"] = ~np.asarray(
        pc.equal(table.column("scenario_id"), expected_scenario).fill_null(False)
    )
    settings = np.zeros(len(table), dtype=bool)
    for name, want in (("threshold", cert.threshold), ("capacity", cert.capacity), ("seed", cert.seed)):
        settings |= ~np.asarray(pc.equal(_field(der, name), want).fill_null(False), dtype=bool)
    checks["settings"] = settings
    implied = old_oriented_input_hashes(
        table.column("prompt"), table.column("chosen"), table.column("rejected"), side
    )
    checks["texts"] = ~np.asarray(
        pc.equal(_field(der, "judge", "input_sha256"), pa.array(implied, pa.string())).fill_null(False),
        dtype=bool,
    )
    index = score_index(scores)
    keys = list(zip(_field(der, "pair_id").to_pylist(), table.column("tenet").to_pylist()))
    found = np.array([k in index for k in keys], dtype=bool)
    rows = pa.array([index.get(k, 0) for k in keys])
    judged = ~found
    for name in JUDGE_FIELDS:
        stored = _field(der, "judge", name)
        expected = scores.column(name).take(rows)
        judged |= ~np.asarray(pc.equal(stored, expected).fill_null(False), dtype=bool)
    checks["judge"] = judged
    return checks


# --- phases ---


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def build(folder: Path, pairs_n: int, seed: int) -> dict:
    import pyarrow.parquet as pq

    from spl_hf.assign.synthetic import FULL_CAPACITY, card_capacity, card_shaped_scores
    from spl_hf.build.tenets import TenetBuildConfig, build_tenets
    from spl_hf.contract import input_hashes
    from spl_hf.sources import ADAPTERS

    t0 = time.perf_counter()
    scores = card_shaped_scores(pairs_n, seed=seed, num_tenets=60, tenets_per_pair=8.2)
    pair_names = pa.array([f"pair-{i:07d}" for i in range(pairs_n)])
    pair_of = pc.index_in(scores.column("pair_id"), value_set=pair_names).to_numpy()
    prompt_of = np.zeros(pairs_n, dtype=object)
    prompt_of[pair_of] = scores.column("prompt_id").to_numpy(zero_copy_only=False)
    rng = np.random.default_rng(seed)
    unjudged = np.flatnonzero(prompt_of == 0)
    prompt_of[unjudged] = [f"prompt-u{i:07d}" for i in unjudged]
    pools = list(ADAPTERS)
    source = np.array(pools, dtype=object)[np.arange(pairs_n) % len(pools)]
    row_id = np.arange(pairs_n) // len(pools)
    words = np.array(
        [
            "the",
            "a",
            "answer",
            "helps",
            "safely",
            "explains",
            "clearly",
            "because",
            "users",
            "ask",
            "about",
            "policy",
            "risk",
        ]
    )

    def text(kind: str) -> list[str]:
        picks = words[rng.integers(0, len(words), (pairs_n, 24))]
        return [f"{kind} {i}: " + " ".join(w) for i, w in enumerate(picks)]

    prompt_text = text("Question")
    prompt = pa.array([[{"role": "user", "content": t}] for t in prompt_text])
    resp_a, resp_b = pa.array(text("Reply A")), pa.array(text("Reply B"))
    judged = input_hashes(prompt, resp_a, resp_b)
    pairs = pa.table(
        {
            "pair_id": pair_names,
            "prompt_id": pa.array(prompt_of.tolist(), pa.string()),
            "source": pa.array(source.tolist(), pa.string()),
            "row_id": pa.array(row_id),
            "prompt": prompt,
            "response_a": resp_a,
            "response_b": resp_b,
        }
    )
    s = scores.column("score").to_numpy()
    p1, p2 = (1 + s) / 2, (1 - s) / 2
    n = scores.num_rows
    full = pa.table(
        {
            "pair_id": scores.column("pair_id"),
            "prompt_id": scores.column("prompt_id"),
            "source": pairs.column("source").take(pa.array(pair_of)),
            "tenet": scores.column("tenet"),
            "score": pa.array(p1 - p2),
            "p_a_first": pa.array(p1),
            "p_a_second": pa.array(p2),
            "mass_first": pa.array(np.full(n, 0.9)),
            "mass_second": pa.array(np.full(n, 0.8)),
            "model_id": pa.array(["synthetic-judge"] * n),
            "model_revision": pa.array(["sha256:0"] * n),
            "template_hash": pa.array(["t1"] * n),
            "input_sha256": judged.take(pa.array(pair_of)),
        }
    )
    work = folder.parent
    pq.write_table(pairs, work / "pairs.parquet")
    pq.write_table(full, work / "scores.parquet")
    tenets = sorted(set(scores.column("tenet").to_pylist()))
    (work / "tenets.yaml").write_text(
        "tenets:\n" + "".join(f"  {t}: synthetic statement {t}\n" for t in tenets)
    )
    gen = time.perf_counter() - t0
    capacity = FULL_CAPACITY if pairs_n == 334_610 else card_capacity(pairs_n)
    t0 = time.perf_counter()
    result = build_tenets(
        TenetBuildConfig(
            pairs=str(work / "pairs.parquet"),
            scores=str(work / "scores.parquet"),
            capacity=capacity,
            threshold=0.5,
            output_dir=str(folder),
            tenets_file=str(work / "tenets.yaml"),
        )
    )
    eligible = int((np.abs(p1 - p2) >= 0.5).sum())
    return {
        "phase": "build",
        "pairs": pairs_n,
        "judge_rows": n,
        "eligible_judge_rows": eligible,
        "rows": result.rows,
        "kept_tenets": len(result.tenets_kept),
        "capacity": capacity,
        "generate_s": round(gen, 2),
        "build_s": round(time.perf_counter() - t0, 2),
        "peak_rss_mib": round(peak_rss_mib()),
    }


def audit(folder: Path) -> dict:
    from spl_hf.audit.tenets.rows import audit_tenet_build

    t0 = time.perf_counter()
    report = audit_tenet_build(folder)
    seconds = time.perf_counter() - t0
    return {
        "phase": "audit",
        "seconds": round(seconds, 2),
        "peak_rss_mib": round(peak_rss_mib()),
        "rows": report.rows,
        "reproduced": report.reproduced,
        "ok": report.ok,
        "certificate_ok": report.certificate_ok,
        "failures": report.failures[:5],
        "certificate_failures": report.certificate_failures[:5],
    }


def compare(folder: Path, slice_splits: int) -> dict:
    from spl_hf.assign.certificate import Certificate
    from spl_hf.audit.load import read_folder
    from spl_hf.audit.tenets.rows import check_rows
    from spl_hf.contract import CERTIFICATE_FILE, ROW_FEATURES, SCORE_FEATURES

    built = read_folder(folder, manifest=False)
    cert = Certificate.from_dict(json.loads((folder / CERTIFICATE_FILE).read_text()))
    scores = pa.concat_tables([s.table for s in built.config("judge_scores")]).cast(
        SCORE_FEATURES.arrow_schema
    )
    row_splits = [s for s in built.splits if s.config != "judge_scores"]
    chosen = [s.table.cast(ROW_FEATURES.arrow_schema) for s in row_splits[:slice_splits]]
    old, old_times = [], []
    for t in chosen:
        t0 = time.perf_counter()
        old.append(old_check_rows(t, scores, cert))
        old_times.append(time.perf_counter() - t0)
    old_s = sum(old_times)
    t0 = time.perf_counter()
    new = check_rows(pa.concat_tables(chosen), scores, cert)
    new_s = time.perf_counter() - t0
    same = all(np.array_equal(np.concatenate([o[k] for o in old]), new[k]) for k in new)
    rows = sum(t.num_rows for t in chosen)
    return {
        "phase": "compare",
        "splits": len(chosen),
        "of_splits": len(row_splits),
        "rows": rows,
        "judge_rows": scores.num_rows,
        "old_s": round(old_s, 2),
        "new_s": round(new_s, 2),
        "ratio_old_over_new": round(old_s / new_s, 1),
        "same_verdicts": same,
        "old_s_per_split": [round(x, 2) for x in old_times],
        # The old audit ran check_rows once per split: the first split ('all') as measured, every
        # other split at the mean of the measured per-tenet splits.
        "old_s_extrapolated_all_splits": round(
            old_times[0]
            + (len(row_splits) - 1) * (float(np.mean(old_times[1:])) if len(old_times) > 1 else old_times[0])
        ),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=334_610)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workdir", default="/tmp/bench_audit_tenets")
    ap.add_argument("--slice_splits", type=int, default=3, help="row splits the baseline runs on")
    ap.add_argument("--phase", choices=("build", "audit", "compare"), help=argparse.SUPPRESS)
    ap.add_argument("--tiny", action="store_true", help="tiny sizes: a smoke run (the test suite runs it)")
    args = ap.parse_args()
    if args.tiny:
        args.pairs, args.slice_splits = 3_000, 1
    folder = Path(args.workdir) / f"pairs{args.pairs}-seed{args.seed}" / "release"
    if args.phase:
        result = {
            "build": lambda: build(folder, args.pairs, args.seed),
            "audit": lambda: audit(folder),
            "compare": lambda: compare(folder, args.slice_splits),
        }[args.phase]()
        print(json.dumps(result))
        return
    folder.parent.mkdir(parents=True, exist_ok=True)
    phases = (["build"] if not folder.exists() else []) + ["audit", "compare"]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            [str(Path(__file__).resolve().parents[1]), os.environ.get("PYTHONPATH", "")]
        ),
    }
    results = {}
    for phase in phases:
        cmd = [
            sys.executable,
            __file__,
            "--phase",
            phase,
            "--pairs",
            str(args.pairs),
            "--seed",
            str(args.seed),
            "--workdir",
            args.workdir,
            "--slice_splits",
            str(args.slice_splits),
        ]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
        result = results[phase] = json.loads(out.strip().splitlines()[-1])
        print(json.dumps(result))
        if phase == "audit":
            print(
                f"audit end to end: {result['seconds']} s (target < 60 s), peak RSS {result['peak_rss_mib']} MiB "
                f"(target < 4096 MiB), ok={result['ok']}"
            )
        if phase == "compare":
            print(
                f"check_rows on {result['splits']} of {result['of_splits']} row splits ({result['rows']} rows, "
                f"{result['judge_rows']} judge rows): old {result['old_s']} s, new {result['new_s']} s, "
                f"ratio {result['ratio_old_over_new']}x, same verdicts: {result['same_verdicts']}; the old "
                f"audit over all splits would take about {result['old_s_extrapolated_all_splits']} s"
            )
    old_total, new_total = results["compare"]["old_s_extrapolated_all_splits"], results["audit"]["seconds"]
    print(
        f"ratio: old check_rows over every split (extrapolated) / new audit end to end = "
        f"{old_total} s / {new_total} s = {old_total / new_total:.0f}x"
    )


if __name__ == "__main__":
    main()
