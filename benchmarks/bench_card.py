"""Rehearsal of the card-scale job, end to end, at its real shape, with a synthetic engine.

The v3 card's job: 334,610 pairs from 8 sources x 49 tenets, judged in both orderings (16.4M
scores, 32.8M judgements), assigned by min-cost flow (capacity 4,000 per tenet: 196,000 rows),
written, audited and published. This script runs that job through the real release
(``TenetRelease.run``: read, decontaminate, judge, assign, write, audit, publish), the real runner,
executor (``local``) and results store, on synthetic pools of the card's shape:

- the card's 8 sources with its shares (``SHARES``), read by the ``preference`` adapter from TRL
  conversational JSON Lines; the two multi-turn pools (ca_en_mt_p1, wf_mt: 27.7% of rows) have
  earlier turns, flattened by the adapter as in the real pools;
- text lengths per source (``WORDS``: prompt, response words, log-normal spread) chosen so that a
  pair's judge prefix averages ~1,500 characters (the real HH prefix: 302 tokens, ~1,200 chars);
- the 49 built-in tenets, and held-out OR-Bench sets holding a few exact copies of pool prompts.

The judge's engine is the rehearsal engine (:mod:`spl_hf.backends.rehearsal`): the real judge
worker builds every prompt, and only the model call is replaced by deterministic synthetic scores.
Every score row names it as the model, and ``publish`` refuses its builds (but to a local Hub on
127.0.0.1, started here). Its time (the runner's ``engine_seconds``: the worker's ``compute_batch``,
prompts and scores) is reported and excluded. The judge takes the card recipe's engine settings (64
pairs per submission, as on vLLM), on one local replica process per core (``--replicas``: two on
this machine); the engine's seconds, summed over the replicas, then count for
their sum over the replica count of wall time.

Reported per stage: wall and CPU seconds of the driver, its peak RSS during the stage (sampled
every 0.2 s), the peak of Arrow's memory pool in it (columnar data; the rest of the RSS is Python
objects, the heap and what the allocators keep) and the bytes the stage stored. Targets (issue 37), model time excluded: everything
but the engine under 10 minutes at full size; driver peak RSS under 4 GB at 16.4M scores; peak RSS
at full size at most 1.3x that at a quarter. The ratio line compares the run with the same job at
--baseline_fraction (default 1/4 of the card, or the --tiny pair) run first in the same process
order; each size runs in a fresh subprocess, so each peak RSS is that size's own.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_card.py --fraction 0.25 --workdir /tmp/card
    PYTHONPATH=. .venv/bin/python benchmarks/bench_card.py             # full size, baseline 1/4
    PYTHONPATH=. .venv/bin/python benchmarks/bench_card.py --tiny      # the suite's: seconds
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

CARD_PAIRS = 334_610
CARD_CAPACITY = 4_000
# v3 card, "source | rows | share" (its released rows; the pools are drawn in the same shares)
SHARES = {
    "ultrafeedback_train": 0.279,
    "ca_en_mt_p1": 0.212,
    "hh_train": 0.179,
    "pku_train": 0.149,
    "wf_mt": 0.065,
    "community_alignment_en": 0.047,
    "helpsteer2_train": 0.040,
    "wildfeedback_st": 0.029,
}
MULTI_TURN = ("ca_en_mt_p1", "wf_mt")
# (prompt words, response words) medians; earlier turns of a multi-turn prompt: 2-4 of 25-40 words
WORDS = {
    "ultrafeedback_train": (45, 140),
    "ca_en_mt_p1": (30, 110),
    "hh_train": (18, 55),
    "pku_train": (20, 70),
    "wf_mt": (30, 100),
    "community_alignment_en": (35, 120),
    "helpsteer2_train": (60, 150),
    "wildfeedback_st": (40, 110),
}
TARGET_S = 600.0
TARGET_MIB = 4 * 1024
MAX_GROWTH = 1.3  # peak RSS at full size over that at a quarter
STAGES = ("read", "decontaminate", "judge", "assign", "write", "audit", "publish")


def rss_mib() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


# --- inputs -------------------------------------------------------------------------------------


def prepare(work: Path, pairs_n: int, seed: int) -> dict[str, Any]:
    """The 8 pools, two held-out sets; about 1.3 pairs per prompt, as in the card's pools."""
    rng = np.random.default_rng(seed)
    vocab = np.array(_vocabulary())
    counts = _split(pairs_n)
    work.mkdir(parents=True, exist_ok=True)
    chars = 0
    pool_prompts: list[str] = []
    for source, n in counts.items():
        pw, rw = WORDS[source]
        prompts = max(1, round(n / 1.3))
        prompt_of = np.concatenate(
            [np.arange(min(prompts, n)), rng.integers(0, prompts, max(0, n - prompts))]
        )
        texts = [_text(rng, vocab, pw, f"{source} question {i}") for i in range(prompts)]
        history = [_history(rng, vocab) if source in MULTI_TURN else [] for _ in range(prompts)]
        pool_prompts += texts[:3]
        with open(work / f"{source}.jsonl", "w", encoding="utf-8") as fh:
            for i in range(n):
                p = int(prompt_of[i])
                a, b = _text(rng, vocab, rw, f"reply a {i}"), _text(rng, vocab, rw, f"reply b {i}")
                prompt = [*history[p], {"role": "user", "content": texts[p]}]
                chars += sum(len(m["content"]) for m in prompt) + len(a) + len(b)
                rec = {
                    "prompt": prompt,
                    "chosen": [{"role": "assistant", "content": a}],
                    "rejected": [{"role": "assistant", "content": b}],
                }
                fh.write(json.dumps(rec) + "\n")
    heldout = pool_prompts + [_text(rng, vocab, 20, f"evaluation request {i}") for i in range(400)]
    for name, part in (("or_bench_hard_1k", heldout[::2]), ("or_bench_toxic", heldout[1::2])):
        import csv

        with open(work / f"{name}.csv", "w", encoding="utf-8", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["prompt", "category"])
            w.writerows([t, "harmful"] for t in part)
    return {"pairs": pairs_n, "per_source": counts, "mean_pair_chars": round(chars / max(1, pairs_n), 1)}


def _split(pairs_n: int) -> dict[str, int]:
    raw = {s: int(pairs_n * f) for s, f in SHARES.items()}
    raw["ultrafeedback_train"] += pairs_n - sum(raw.values())
    return {s: max(1, n) for s, n in raw.items()}


def _vocabulary() -> list[str]:
    from importlib import resources

    text = resources.files("spl_hf.data").joinpath("tenets.yaml").read_text()
    return sorted({w for w in (t.strip(".,;:()'\"").lower() for t in text.split()) if w.isalpha()})


def _text(rng: Any, vocab: Any, median: int, head: str) -> str:
    n = max(3, int(rng.lognormal(np.log(median), 0.5)))
    return head + " " + " ".join(vocab[rng.integers(0, len(vocab), n)])


def _history(rng: Any, vocab: Any) -> list[dict[str, str]]:
    turns = []
    for k in range(int(rng.integers(1, 3))):
        turns.append({"role": "user", "content": _text(rng, vocab, 30, f"earlier question {k}")})
        turns.append({"role": "assistant", "content": _text(rng, vocab, 40, f"earlier answer {k}")})
    return turns


# --- one size, in its own process -----------------------------------------------------------------


class Sampler(threading.Thread):
    """Peak RSS per stage: the release's log lines say which stage runs."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.stage, self.peaks, self.arrow, self.stop = "setup", {}, {}, threading.Event()

    def run(self) -> None:
        while not self.stop.wait(0.2):
            self.note()

    def note(self) -> None:
        import pyarrow as pa

        self.peaks[self.stage] = max(self.peaks.get(self.stage, 0.0), rss_mib())
        # Arrow's pool apart: what of the peak is columnar data, the rest Python objects and the heap
        self.arrow[self.stage] = max(self.arrow.get(self.stage, 0.0), pa.total_allocated_bytes() / 2**20)


def run_size(work: Path, fraction: float, seed: int, tiny: bool, replicas: int = 1) -> dict[str, Any]:
    import shutil

    from spl_hf_hub_server import RunningServer

    from spl_hf.assign import AssignConfig
    from spl_hf.backends.executor import ExecutorArgs
    from spl_hf.backends.rehearsal import rehearsal_stage
    from spl_hf.backends.settings import JudgeConfig
    from spl_hf.decontam import DecontamConfig
    from spl_hf.release.tenets import TenetRelease, TenetReleaseConfig

    pairs_n = 40 if tiny else round(CARD_PAIRS * fraction)
    inputs = work / "inputs.json"
    if not inputs.is_file():
        shutil.rmtree(work, ignore_errors=True)
        inputs.parent.mkdir(parents=True, exist_ok=True)
        inputs.write_text(json.dumps(prepare(work, pairs_n, seed)))
    for sub in ("run", "dataset", "hub"):
        shutil.rmtree(work / sub, ignore_errors=True)
    sampler = Sampler()
    cpu: dict[str, float] = {}
    started: dict[str, float] = {}

    def log(message: str) -> None:
        if message.startswith("[") and "]" in message:
            name = message[1 : message.index("]")]
            if "] running" in message:
                sampler.note()
                sampler.stage, started[name] = name, time.process_time()
            elif "] done in" in message:
                sampler.note()
                cpu[name] = time.process_time() - started.get(name, time.process_time())

    class Rehearsal(TenetRelease):
        def judge_stage(self) -> Any:
            return rehearsal_stage(self.judge, seed=seed)

    capacity = max(1, round(CARD_CAPACITY * pairs_n / CARD_PAIRS))
    token = "rehearsal-token"
    with RunningServer(str(work / "hub"), token=token) as hub:
        os.environ.update({"HF_ENDPOINT": hub.url, "HF_TOKEN": token, "HF_HUB_DISABLE_XET": "1"})
        cfg = TenetReleaseConfig(
            pools=[
                json.dumps(
                    {"source": f"rehearsal_{s}", "adapter": "preference", "path": str(work / f"{s}.jsonl")}
                )
                for s in SHARES
            ],
            heldout_files=[f"{h}={work / f'{h}.csv'}" for h in ("or_bench_hard_1k", "or_bench_toxic")],
            run_dir=str(work / "run"),
            output_dir=str(work / "dataset"),
            repo_id="rehearsal/card",
            overwrite=True,
            gates_note="rehearsal: synthetic scores",
        )
        assign = AssignConfig(capacity=capacity, threshold=0.5, seed=42)
        executor = ExecutorArgs(replicas=replicas)
        # The card recipe's engine settings (docs/card_scale.md): 64 pairs per engine submission, so a
        # shard of 16 pairs is one call, as on vLLM (the journal is for calls within a shard).
        judge = JudgeConfig(progress=False, batch_pairs=64)
        release = Rehearsal(cfg, assign, judge, DecontamConfig(), executor)
        release.log = log
        sampler.start()
        load = os.getloadavg()[0]
        t0, c0 = time.perf_counter(), time.process_time()
        report = release.run()
        wall, cpu_all = time.perf_counter() - t0, time.process_time() - c0
        sampler.stop.set()
        sampler.note()
    replica_cpu = resource.getrusage(resource.RUSAGE_CHILDREN)  # the replica processes, ended and reaped
    timing = {
        **release.judge_timing,
        "replica_cpu_s": replica_cpu.ru_utime + replica_cpu.ru_stime,
        "replica_max_rss_mib": replica_cpu.ru_maxrss / 1024 if replicas > 1 else 0.0,
    }
    clean = Path(next(s["path"] for s in report["stages"] if s["name"] == "decontaminate"))
    prompts = _prompts(clean / "pairs.parquet", release, seed)
    return _summary(work, report, timing, prompts, sampler, cpu, wall, cpu_all, load, inputs)


def _prompts(path: Path, release: Any, seed: int, sample: int = 4000) -> dict[str, Any]:
    """The judge's prompts, measured on an even sample of the judged pairs (outside the timed run)."""
    import pyarrow.parquet as pq

    from spl_hf.backends import parse_pairs
    from spl_hf.backends.rehearsal import make_rehearsal_judge

    table = pq.read_table(path)
    step = max(1, table.num_rows // sample)
    pairs, _ = parse_pairs(table.take(list(range(0, table.num_rows, step))).to_pylist())
    judge = make_rehearsal_judge(release.judge, seed)
    prefix = question = n_q = 0
    for pair in pairs:
        for head, questions, _ in judge._jobs(pair, release.tenets):
            prefix += len(head)
            question += sum(len(q) for q in questions)
            n_q += len(questions)
    return {
        "prefixes": 2 * table.num_rows,
        "questions": 2 * table.num_rows * len(release.tenets),
        "prefix_chars_mean": round(prefix / max(1, 2 * len(pairs)), 1),
        "question_chars_mean": round(question / max(1, n_q), 1),
        "sampled_pairs": len(pairs),
    }


def _summary(
    work: Path,
    report: dict,
    timing: dict,
    prompts: dict,
    sampler: Sampler,
    cpu: dict,
    wall: float,
    cpu_all: float,
    load: float,
    inputs: Path,
) -> dict[str, Any]:
    """One size's figures: per stage wall, CPU, peak RSS and bytes stored; the engine's share."""
    stages = {s["name"]: s for s in report["stages"]}
    judge = stages["judge"]["counts"]
    stored = _stored(work, stages)
    return {
        "pairs": json.loads(inputs.read_text())["pairs"],
        "scores": judge["scores"],
        "rows": stages["write"]["counts"]["rows"],
        "tenets_kept": len(stages["write"]["counts"].get("tenets_kept", [])),
        "inputs": json.loads(inputs.read_text()),
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu_all, 2),
        "replicas": int(timing.get("replicas") or 1),
        "replica_cpu_s": round(timing["replica_cpu_s"], 2),
        "replica_max_rss_mib": round(timing["replica_max_rss_mib"]),
        "engine_s": round(float(timing.get("engine_seconds") or 0.0), 2),
        "judge_timing": {k: timing.get(k) for k in ("compute_seconds", "engine_seconds", "write_seconds")},
        "prompts": prompts,
        "seconds": {n: round(s["seconds"], 2) for n, s in stages.items()},
        "cpu_seconds": {n: round(v, 2) for n, v in cpu.items()},
        "peak_rss_mib": {n: round(v) for n, v in sampler.peaks.items()},
        "peak_arrow_mib": {n: round(v) for n, v in sampler.arrow.items()},
        "max_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "stored_bytes": stored,
        "load": [round(load, 2), round(os.getloadavg()[0], 2)],
        "audit_ok": stages["audit"]["counts"].get("ok"),
        "published": stages.get("publish", {}).get("counts", {}).get("commit_sha") is not None
        or "publish" in stages,
    }


def _stored(work: Path, stages: dict[str, Any]) -> dict[str, int]:
    def size(p: Path) -> int:
        return sum(f.stat().st_size for f in p.rglob("*") if f.is_file()) if p.exists() else 0

    out = {n: size(Path(s["path"])) for n, s in stages.items()}
    out["judge"] += size(work / "run" / "results")
    out["write"] += size(work / "dataset")
    out["publish"] = size(work / "hub")
    return out


# --- the sizes, and the table ---------------------------------------------------------------------


def child(work: Path, fraction: float, seed: int, tiny: bool, replicas: int = 1) -> dict[str, Any]:
    """One size in a fresh process (its own peak RSS); its JSON is the last line it prints."""
    cmd = [sys.executable, __file__, "--_one", str(fraction), "--workdir", str(work), "--seed", str(seed)]
    cmd += ["--replicas", str(replicas)]
    cmd += ["--tiny"] if tiny else []
    # The publish stage talks only to the local Hub this process starts on 127.0.0.1 (offline mode, as
    # the suite sets it, would refuse even that); nothing else is reached.
    env = {**os.environ, "TQDM_DISABLE": "1", "HF_HUB_OFFLINE": "0"}
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if done.returncode:
        sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
        raise SystemExit(f"bench_card: the run at fraction {fraction} failed (exit {done.returncode})")
    return json.loads(done.stdout.strip().splitlines()[-1])


def driver_seconds(r: dict[str, Any]) -> float:
    """Wall seconds of everything but the engine (the rehearsal's stand-in for the model).

    The engine's seconds are summed over the replicas, which ran side by side: the wall they took
    is that sum over the replica count (the shards are spread evenly, one at a time per replica).
    """
    return r["wall_s"] - r["engine_s"] / r["replicas"]


def table(results: list[dict[str, Any]]) -> str:
    lines = []
    for r in results:
        lines.append(
            f"\n{r['pairs']:,} pairs, {r['scores']:,} scores, {r['rows']:,} rows, {r['tenets_kept']} tenets kept, "
            f"audit ok {r['audit_ok']}, load {r['load'][0]} -> {r['load'][1]}"
        )
        lines.append(
            f"  {'stage':<14}{'wall s':>9}{'cpu s':>9}{'peak RSS MiB':>14}{'Arrow MiB':>11}{'stored MiB':>12}"
        )
        for n in STAGES:
            if n not in r["seconds"]:
                continue
            lines.append(
                f"  {n:<14}{r['seconds'][n]:>9.1f}{r['cpu_seconds'].get(n, 0):>9.1f}"
                f"{r['peak_rss_mib'].get(n, 0):>14,}{r['peak_arrow_mib'].get(n, 0):>11,}"
                f"{r['stored_bytes'].get(n, 0) / 2**20:>12.1f}"
            )
        peak = max(r["peak_rss_mib"].values())
        pr = r["prompts"]
        lines.append(
            f"  prompts built: {pr['prefixes']:,} prefixes of {pr['prefix_chars_mean']:,.0f} chars, "
            f"{pr['questions']:,} questions of {pr['question_chars_mean']:,.0f} chars (mean)"
        )
        lines.append(
            f"  all {r['wall_s']:.1f} s wall, {r['cpu_s']:.1f} s CPU; engine {r['engine_s']:.1f} s "
            f"over {r['replicas']} replica(s) (replica processes: CPU {r['replica_cpu_s']:.1f} s, "
            f"peak RSS {r['replica_max_rss_mib']:,} MiB); "
            f"everything but the engine {driver_seconds(r):.1f} s; driver peak {peak:,} MiB "
            f"({peak * 2**20 / max(1, r['scores']):.0f} B/score); "
            f"CPU but the engine {(r['cpu_s'] + r['replica_cpu_s'] - r['engine_s']) * 1e6 / max(1, r['scores']):.1f}"
            " us/score"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fraction", type=float, action="append", help="size(s) as a fraction of the card")
    ap.add_argument("--baseline_fraction", type=float, default=0.25, help="the ratio line's baseline size")
    ap.add_argument("--tiny", action="store_true", help="40 pairs, baseline the same (the suite's run)")
    ap.add_argument("--workdir", type=Path, default=Path("bench_card_work"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--replicas",
        type=int,
        default=None,
        help="judge replicas, local processes (default: one per core; --tiny: 1, this process)",
    )
    ap.add_argument("--_one", type=float, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.replicas is None:
        args.replicas = 1 if args.tiny else len(os.sched_getaffinity(0))
    if args._one is not None:
        print(json.dumps(run_size(args.workdir, args._one, args.seed, args.tiny, args.replicas)))
        return 0
    fractions = [1.0] if args.tiny else sorted(set(args.fraction or [1.0]))
    base_f = fractions[0] if args.tiny else args.baseline_fraction
    results = {}
    for f in sorted({base_f, *fractions}):
        results[f] = child(args.workdir / f"f{f:g}", f, args.seed, args.tiny, args.replicas)
    print(table([results[f] for f in sorted(results)]))
    top, base = results[max(fractions)], results[base_f]
    top_peak, base_peak = max(top["peak_rss_mib"].values()), max(base["peak_rss_mib"].values())
    growth = top_peak / base_peak
    print(
        f"\ntargets at {top['scores']:,} scores: everything but the engine {driver_seconds(top):.1f} s "
        f"(< {TARGET_S:.0f} s at the card), driver peak {top_peak:,} MiB (< {TARGET_MIB:,} MiB), "
        f"peak RSS {growth:.2f}x the {base['scores']:,}-score run's (<= {MAX_GROWTH}x from 1/4 to 1)"
    )
    print(
        f"ratio peak RSS {top['pairs']:,} / {base['pairs']:,} pairs: {growth:.2f}x "
        f"(scores {top['scores'] / base['scores']:.2f}x)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
