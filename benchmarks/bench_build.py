"""Benchmark of the per-tenet release builder's stages after judging, on a synthetic card-scale pool.

The release itself runs (`spl_hf.release.tenets.TenetRelease.run`: stage keys, stage folders,
the real read, decontaminate, assign, write and audit), with one change: the judge stage, which
needs a model, is replaced by a synthetic judge that scores the decontaminated pairs with a
card-shaped score table (`spl_hf.assign.synthetic`: 60 tenets, 11 of them unable to fill the
capacity, about 8 eligible tenets per pair) whose scores are exactly ``p_a_first - p_a_second`` and
whose ``input_sha256`` is the hash of the judged texts. Its time is reported but not counted.
It writes about 8.8 scores per pair, not the card's 49, and skips the judge stage's shard read-back:
the whole job at card volume (all 49 tenets per pair through the real runner, store and read-back,
then assign, write, audit and publish) is rehearsed by ``bench_card.py``.

Inputs, written once per size (``prepare``, not timed against the target):

- three raw pair pools in their sources' own layouts (PKU-SafeRLHF, HH-RLHF, UltraFeedback JSON
  Lines), ``--pairs`` pairs in all, about 1.3 pairs per prompt, read through the source adapters;
- two held-out sets (OR-Bench-Hard-1K and OR-Bench-Toxic CSV layouts), ``--heldout`` prompts in all,
  of which ``--contaminated`` are training prompts (exact copies, copies with case, whitespace and
  quote changes, and near-duplicates with the last word changed), so removal is exercised;
- a tenets file naming the 60 synthetic tenets.

Each size runs in a fresh subprocess (the release is one process, so its peak RSS is the
process's); peak RSS is sampled after every stage, so the table shows which stage raised it, and
each stage's CPU seconds (all threads) stand beside its wall seconds, with the load average at the
start and end of the run (the machine may be shared). Then each measured stage of the full-size run
is run again alone in a fresh process (its folder removed, so the release reruns it and skips the
rest, whose keys do not change): the ``alone`` columns give that stage's own seconds and peak RSS
(``--no_stage_peaks`` skips this). The baseline is the same run at ``--baseline_pairs`` (10,000)
pairs: the ratio column says how each stage's time grows from it, and ``/linear`` divides that by
the growth in pairs (1.0 = linear).

Memory: the same run at twice the pairs (669,220; ``--no_double`` skips it) gives the peak RSS at
1x and 2x. Memory that grows only with the rows themselves at most doubles (the interpreter and its
imports do not grow at all), so the 2x/1x ratio of the peaks is the check (issue 27: at most 2).

    PYTHONPATH=. .venv/bin/python benchmarks/bench_build.py                  # 334,610 pairs, baseline 10k, 2x
    PYTHONPATH=. .venv/bin/python benchmarks/bench_build.py --pairs 30000 --no_double --no_stage_peaks  # quick
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

MEASURED = ("read", "decontaminate", "assign", "write", "audit")
TARGET_S = 60.0  # issue 27: the post-judge release at card scale
TARGET_MIB = 6 * 1024
MAX_MEMORY_GROWTH = 2.0  # peak RSS at 2x the pairs over that at 1x: no more than the rows themselves
POOLS = ("pku_train", "hh_train", "ultrafeedback_train")
NUM_TENETS = 60
TENETS_PER_PAIR = 8.2


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def capacity_for(pairs: int) -> int:
    from spl_hf.assign.synthetic import FULL_CAPACITY, FULL_PAIRS, card_capacity

    return FULL_CAPACITY if pairs == FULL_PAIRS else card_capacity(pairs)


# --- inputs ---


def _vocabulary() -> list[str]:
    from importlib import resources

    text = resources.files("spl_hf.data").joinpath("tenets.yaml").read_text()
    return sorted({w for w in (t.strip(".,;:()'\"").lower() for t in text.split()) if w.isalpha()})


def prepare(work: Path, pairs_n: int, heldout_n: int, contaminated: int, seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    vocab = np.array(_vocabulary())
    prompts_n = max(1, round(pairs_n / 1.3))
    # Every prompt once, the rest of the pairs on random prompts: about 1.3 pairs per prompt.
    prompt_of = np.concatenate(
        [np.arange(min(prompts_n, pairs_n)), rng.integers(0, prompts_n, max(0, pairs_n - prompts_n))]
    )
    rng.shuffle(prompt_of)

    def texts(kind: str, n: int, words: int) -> list[str]:
        picks = vocab[rng.integers(0, len(vocab), (n, words))]
        return [f"{kind} {i} " + " ".join(w) + "?" * (kind == "Question") for i, w in enumerate(picks)]

    prompt_text = texts("Question", prompts_n, 24)
    resp_a, resp_b = texts("Reply A", pairs_n, 40), texts("Reply B", pairs_n, 40)
    work.mkdir(parents=True, exist_ok=True)
    pool_of = np.arange(pairs_n) % len(POOLS)
    with contextlib.ExitStack() as stack:
        writers = {
            name: stack.enter_context(open(work / f"{name}.jsonl", "w", encoding="utf-8")) for name in POOLS
        }
        for i in range(pairs_n):
            q, a, b = prompt_text[prompt_of[i]], resp_a[i], resp_b[i]
            name = POOLS[pool_of[i]]
            if name == "pku_train":
                rec = {
                    "prompt": q,
                    "response_0": a,
                    "response_1": b,
                    "prompt_source": "synthetic",
                    "response_0_source": "synthetic",
                    "response_1_source": "synthetic",
                    "is_response_0_safe": True,
                    "is_response_1_safe": bool(i % 2),
                    "better_response_id": i % 2,
                    "safer_response_id": 0,
                }
            elif name == "hh_train":
                rec = {
                    "chosen": f"\n\nHuman: {q}\n\nAssistant: {a}",
                    "rejected": f"\n\nHuman: {q}\n\nAssistant: {b}",
                }
            else:
                rec = {
                    "prompt": q,
                    "prompt_id": "",
                    "chosen": [{"content": q, "role": "user"}, {"content": a, "role": "assistant"}],
                    "rejected": [{"content": q, "role": "user"}, {"content": b, "role": "assistant"}],
                    "messages": [],
                    "score_chosen": 8.0,
                    "score_rejected": 3.0,
                }
            writers[name].write(json.dumps(rec) + "\n")
    # Held-out prompts: a few training prompts (exact, reformatted, near-duplicate), the rest fresh.
    picked = rng.choice(prompts_n, size=min(contaminated, prompts_n), replace=False)
    kinds = {"exact": 0, "reformatted": 0, "near": 0}
    heldout = []
    for j, p in enumerate(picked):
        q = prompt_text[p]
        if j % 3 == 0:
            heldout.append(q)
            kinds["exact"] += 1
        elif j % 3 == 1:
            heldout.append("  " + q.upper().replace(" ", "  ").replace("?", " \u201c?\u201d"))
            kinds["reformatted"] += 1
        else:
            heldout.append(q.rsplit(" ", 1)[0] + " elsewhere?")
            kinds["near"] += 1
    heldout += texts("Evaluation request", max(0, heldout_n - len(heldout)), 20)
    random.Random(seed).shuffle(heldout)
    half = len(heldout) // 2
    for name, part, category in (
        ("or_bench_hard_1k", heldout[:half], "harmful"),
        ("or_bench_toxic", heldout[half:], "violence"),
    ):
        with open(work / f"{name}.csv", "w", encoding="utf-8", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["prompt", "category"])
            w.writerows([t, category] for t in part)
    tenets = "".join(
        f"  tenet_{i:02d}: synthetic statement number {i} of the benchmark\n" for i in range(NUM_TENETS)
    )
    (work / "tenets.yaml").write_text(f"name: bench_build\ntenets:\n{tenets}", encoding="utf-8")
    return {"pairs": pairs_n, "prompts": prompts_n, "heldout": len(heldout), "contaminated_by_kind": kinds}


# --- the release with a synthetic judge ---


def make_release(work: Path, pairs_n: int, seed: int, log: Any) -> Any:
    from spl_hf.assign import AssignConfig
    from spl_hf.backends.settings import JudgeConfig
    from spl_hf.decontam import DecontamConfig
    from spl_hf.release.tenets import TenetRelease, TenetReleaseConfig

    capacity = capacity_for(pairs_n)

    class SyntheticJudgeRelease(TenetRelease):
        """The release with its judge stage replaced by card-shaped synthetic scores (see module doc)."""

        judge_seconds: float = 0.0

        def _judge(self, clean_dir: Path, out: Path) -> dict[str, Any]:
            t0 = time.perf_counter()
            # The judge stage may not read the assignment's settings (its key does not hold them): the
            # synthetic scores' shape is fixed when the release is made.
            counts = synthetic_scores(clean_dir / "pairs.parquet", out / "scores.parquet", capacity, seed)
            self.judge_seconds = time.perf_counter() - t0
            return counts

    cfg = TenetReleaseConfig(
        pools=[f"{p}={work / f'{p}.jsonl'}" for p in POOLS],
        heldout_files=[f"{h}={work / f'{h}.csv'}" for h in ("or_bench_hard_1k", "or_bench_toxic")],
        tenets_file=str(work / "tenets.yaml"),
        run_dir=str(work / "run"),
        output_dir=str(work / "dataset"),
        overwrite=True,
        sft=True,
    )
    assign = AssignConfig(capacity=capacity, threshold=0.5, seed=42)
    release = SyntheticJudgeRelease(cfg, assign, JudgeConfig(), DecontamConfig())
    release.log = log
    return release


def synthetic_scores(pairs_path: Path, out: Path, capacity: int, seed: int) -> dict[str, Any]:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from spl_hf.assign.synthetic import card_shaped_scores
    from spl_hf.contract.tenet_rows import JUDGED_SCORE_COLUMNS, input_hashes

    pairs = pq.read_table(pairs_path)
    n = pairs.num_rows
    shaped = card_shaped_scores(
        n, seed=seed, num_tenets=NUM_TENETS, tenets_per_pair=TENETS_PER_PAIR, capacity=capacity
    )
    # card_shaped_scores names pairs pair-<index>; index i is row i of the decontaminated pairs.
    row = pa.array(pc.cast(pc.utf8_slice_codeunits(shaped.column("pair_id"), 5), pa.int64()))
    judged = input_hashes(*(pairs.column(c).combine_chunks() for c in ("prompt", "response_a", "response_b")))
    s = shaped.column("score").to_numpy()
    p1, p2 = (1 + s) / 2, (1 - s) / 2
    k = shaped.num_rows
    scores = pa.table(
        {
            "pair_id": pairs.column("pair_id").take(row),
            "prompt_id": pairs.column("prompt_id").take(row),
            "source": pairs.column("source").take(row),
            "tenet": shaped.column("tenet"),
            "score": pa.array(p1 - p2),
            "p_a_first": pa.array(p1),
            "p_a_second": pa.array(p2),
            "mass_first": pa.array(np.full(k, 0.9)),
            "mass_second": pa.array(np.full(k, 0.8)),
            "model_id": pa.array(["synthetic-judge"] * k),
            "model_revision": pa.array(["sha256:0"] * k),
            "template_hash": pa.array(["t1"] * k),
            "input_sha256": judged.take(row),
        }
    ).select(list(JUDGED_SCORE_COLUMNS))
    pq.write_table(scores, out)
    # What the real judge stage writes beside its scores (the write stage fingerprints both):
    # a synthetic judge fails on no pair and leaves nothing below a label-mass floor.
    (out.parent / "failures.jsonl").write_text("", encoding="utf-8")
    (out.parent / "not_judged.json").write_text("{}\n", encoding="utf-8")
    return {"pairs": n, "scores": k, "eligible": int((np.abs(p1 - p2) >= 0.5).sum())}


def run_size(work: Path, pairs_n: int, heldout_n: int, contaminated: int, seed: int) -> dict[str, Any]:
    inputs = work / "inputs.json"
    t0 = time.perf_counter()
    if not inputs.is_file():
        shutil.rmtree(work, ignore_errors=True)
        inputs.parent.mkdir(parents=True, exist_ok=True)
        inputs.write_text(json.dumps(prepare(work, pairs_n, heldout_n, contaminated, seed)))
    prepare_s = time.perf_counter() - t0
    # A fresh run folder and no earlier dataset each time, so every stage runs (a kept one would be
    # skipped) and the write stage does not first check an earlier build's files.
    shutil.rmtree(work / "run", ignore_errors=True)
    shutil.rmtree(work / "dataset", ignore_errors=True)
    rss_after: dict[str, float] = {}
    cpu_started: dict[str, float] = {}
    cpu: dict[str, float] = {}

    def log(message: str) -> None:
        if not message.startswith("["):
            return
        name = message[1 : message.index("]")]
        if "] running" in message:
            cpu_started[name] = time.process_time()
        elif "] done in" in message:
            rss_after[name] = peak_rss_mib()
            cpu[name] = time.process_time() - cpu_started.get(name, time.process_time())

    release = make_release(work, pairs_n, seed, log)
    load_before = os.getloadavg()[0]
    t0 = time.perf_counter()
    report = release.run()
    wall = time.perf_counter() - t0
    stages = {s["name"]: s for s in report["stages"]}
    return {
        "pairs": pairs_n,
        "inputs": json.loads(inputs.read_text()),
        "prepare_s": round(prepare_s, 2),
        "wall_s": round(wall, 2),
        "judge_s": round(release.judge_seconds, 2),
        "seconds": {n: round(s["seconds"], 2) for n, s in stages.items()},
        "cpu_seconds": {n: round(v, 2) for n, v in cpu.items()},
        "load": [round(load_before, 2), round(os.getloadavg()[0], 2)],  # 1-minute load at start, end
        "rss_after_mib": {n: round(v) for n, v in rss_after.items()},
        "peak_rss_mib": round(peak_rss_mib()),
        "counts": {
            n: {k: v for k, v in s["counts"].items() if not isinstance(v, (dict, list))}
            for n, s in stages.items()
        },
        "removed_by_match": stages["decontaminate"]["counts"].get("removed_by_match"),
        "tenets_kept": len(stages["write"]["counts"].get("tenets_kept", [])),
    }


def rerun_stage(work: Path, pairs_n: int, seed: int, stage: str) -> dict[str, Any]:
    """Run one stage again in this fresh process: its peak RSS is then the stage's own.

    Removing the stage's folder makes the release run it again; every stage is deterministic, so
    the stages after it get the same keys as before and are skipped.
    """
    for old in (work / "run" / "stages").glob(f"{stage}-*"):
        shutil.rmtree(old)
    release = make_release(work, pairs_n, seed, lambda _m: None)
    report = release.run()
    ran = [s for s in report["stages"] if not s["skipped"]]
    if [s["name"] for s in ran] != [stage]:
        raise RuntimeError(f"expected only {stage!r} to run again, ran {[s['name'] for s in ran]}")
    return {"stage": stage, "seconds": round(ran[0]["seconds"], 2), "peak_rss_mib": round(peak_rss_mib())}


# --- driver ---


def table(base: dict[str, Any], full: dict[str, Any], double: dict[str, Any] | None = None) -> None:
    grow = full["pairs"] / base["pairs"]
    own = full.get("own", {})
    twice_head = "" if double is None else f"{double['pairs']:>9,} pairs  "
    print(
        f"\nstage            {base['pairs']:>9,} pairs  {full['pairs']:>9,} pairs    ratio  /linear  "
        f"cpu s  {twice_head}peak RSS so far (MiB)  alone: s, peak MiB"
    )
    for name in MEASURED:
        b, f = base["seconds"][name], full["seconds"][name]
        ratio = f / b if b else float("nan")
        alone = f"{own[name]['seconds']:>8.2f} s {own[name]['peak_rss_mib']:>7,}" if name in own else ""
        twice = "" if double is None else f"{double['seconds'][name]:>13.2f} s  "
        print(
            f"{name:<16} {b:>13.2f} s {f:>13.2f} s {ratio:>8.1f} {ratio / grow:>8.2f} "
            f"{full.get('cpu_seconds', {}).get(name, 0):>6.1f}  {twice}"
            f"{full['rss_after_mib'].get(name, 0):>20,}  {alone}"
        )
    bt, ft = (sum(r["seconds"][n] for n in MEASURED) for r in (base, full))
    fc = sum(full.get("cpu_seconds", {}).get(n, 0) for n in MEASURED)
    twice = "" if double is None else f"{sum(double['seconds'][n] for n in MEASURED):>13.2f} s  "
    print(
        f"{'end to end':<16} {bt:>13.2f} s {ft:>13.2f} s {ft / bt:>8.1f} {ft / bt / grow:>8.2f} {fc:>6.1f}  "
        f"{twice}{full['peak_rss_mib']:>20,}"
    )
    print(
        f"(not counted: synthetic judge {base['judge_s']} s / {full['judge_s']} s; "
        f"whole release run incl. stage keys {base['wall_s']} s / {full['wall_s']} s; "
        f"1-minute load average at start, end of the {full['pairs']:,}-pair run: {full.get('load')})"
    )
    ok_t, ok_m = ft < TARGET_S, full["peak_rss_mib"] < TARGET_MIB
    print(
        f"\nend to end at {full['pairs']:,} pairs: {ft:.1f} s (target < {TARGET_S:.0f} s: "
        f"{'met' if ok_t else 'MISSED'}), peak RSS {full['peak_rss_mib']:,} MiB (target < {TARGET_MIB:,} MiB: "
        f"{'met' if ok_m else 'MISSED'}); {full['counts']['write'].get('rows')} rows, "
        f"{full['tenets_kept']} tenets kept, audit ok={full['counts']['audit'].get('ok')}, "
        f"decontamination removed {full['counts']['decontaminate'].get('rows_removed')} rows "
        f"({full['removed_by_match']})"
    )
    if double is not None:
        growth = double["peak_rss_mib"] / full["peak_rss_mib"]
        print(
            f"peak RSS: {full['peak_rss_mib'] / 1024:.2f} GB at {full['pairs']:,} pairs (1x), "
            f"{double['peak_rss_mib'] / 1024:.2f} GB at {double['pairs']:,} pairs (2x) "
            f"(target: at most {MAX_MEMORY_GROWTH:g}x, memory growing with the rows only: "
            f"{'met' if growth <= MAX_MEMORY_GROWTH else 'MISSED'})"
        )
        per = (double["peak_rss_mib"] - full["peak_rss_mib"]) / (double["pairs"] - full["pairs"]) * 100_000
        print(f"  (the second {full['pairs']:,} pairs added {per:,.0f} MiB of peak RSS per 100,000 pairs)")
        print(f"ratio: peak RSS at 2x / at 1x the pairs = {growth:.2f}x")
    print(
        f"ratio: end to end at {full['pairs']:,} / at {base['pairs']:,} pairs = {ft / bt:.2f}x for {grow:.1f}x the pairs"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=334_610, help="pairs of the measured run")
    ap.add_argument("--baseline_pairs", type=int, default=10_000, help="pairs of the baseline run")
    ap.add_argument("--heldout", type=int, default=2_000, help="held-out prompts in all")
    ap.add_argument(
        "--contaminated", type=int, default=300, help="held-out prompts taken from training prompts"
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workdir", default="/tmp/bench_build")
    ap.add_argument(
        "--no_stage_peaks",
        action="store_true",
        help="skip rerunning each stage in a fresh process for its own peak RSS",
    )
    ap.add_argument(
        "--no_double", action="store_true", help="skip the run at twice the pairs (peak RSS at 2x)"
    )
    ap.add_argument("--size", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--rerun", choices=MEASURED, help=argparse.SUPPRESS)
    ap.add_argument("--tiny", action="store_true", help="tiny sizes: a smoke run (the test suite runs it)")
    args = ap.parse_args()
    if args.tiny:
        args.pairs, args.baseline_pairs, args.heldout, args.contaminated = 3_000, 1_000, 60, 15
        args.no_stage_peaks = True
    if args.size:
        work = Path(args.workdir) / f"pairs{args.size}-seed{args.seed}"
        if args.rerun:
            print(json.dumps(rerun_stage(work, args.size, args.seed, args.rerun)))
            return
        contaminated = min(args.contaminated, args.heldout)
        print(json.dumps(run_size(work, args.size, args.heldout, contaminated, args.seed)))
        return
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            [str(Path(__file__).resolve().parents[1]), os.environ.get("PYTHONPATH", "")]
        ),
        "TQDM_DISABLE": "1",
    }

    def child(*extra: str) -> dict[str, Any]:
        cmd = [
            sys.executable,
            __file__,
            "--heldout",
            str(args.heldout),
            "--contaminated",
            str(args.contaminated),
            "--seed",
            str(args.seed),
            "--workdir",
            args.workdir,
            *extra,
        ]
        out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True, env=env).stdout
        result = json.loads(out.strip().splitlines()[-1])
        print(json.dumps(result))
        return result

    results = [child("--size", str(size)) for size in (args.baseline_pairs, args.pairs)]
    if not args.no_stage_peaks:
        results[1]["own"] = {n: child("--size", str(args.pairs), "--rerun", n) for n in MEASURED}
    double = None if args.no_double else child("--size", str(2 * args.pairs))
    table(*results, double)


if __name__ == "__main__":
    main()
