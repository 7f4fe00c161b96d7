"""Executor speed: the tenet judge stage on the embedded model, local vs Ray (1 and 2 replicas), one run.

Each executor judges the same synthetic pairs x tenets into its own fresh results folder, end to end
(model load included: the driver's for local, each replica's for Ray; a Ray runtime is started once
beforehand, as a cluster is). Printed per executor: seconds, scores/s, seconds computing and writing
shards. The Ray path's overhead is its stage time minus its replicas' compute and write time, per
item and per shard. Targets: ray with 1 replica >= 0.9x local; shard writing < 5% of stage time.
All outputs must be identical (the same shard files, byte for byte).

--tiny (the test suite) runs the local executor only, unless SPL_HF_TEST_RAY=1 (`make test-ray`).
Usage: python benchmarks/bench_executor.py [--pairs 16] [--tenets 6] [--shard_groups 2] [--tiny]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import tempfile
import time
from pathlib import Path

from spl_hf.backends import (
    ExecutorArgs,
    JudgeConfig,
    ModelArgs,
    ShardStore,
    judge_items,
    judge_stage,
    parse_pairs,
    run_stage,
)
from spl_hf.tenets import select_tenets

TOPICS = ["gardening", "tax forms", "a bicycle chain", "bread dough", "a job interview", "a sore throat"]


def pairs(n: int) -> list:
    rows = []
    for i in range(n):
        topic = TOPICS[i % len(TOPICS)]
        rows.append(
            {
                "pair_id": f"p{i}",
                "prompt_id": f"q{i}",
                "source": "bench",
                "row_id": i,
                "prompt": [{"role": "user", "content": f"How should I deal with {topic}? (case {i})"}],
                "response_a": f"Start with the basics of {topic}, then check each step twice. Ask for help if unsure.",
                "response_b": f"I can't help with {topic}.",
            }
        )
    good, bad = parse_pairs(rows)
    assert not bad
    return good


def run(executor: ExecutorArgs, items: list, folder: Path) -> tuple[float, dict, dict[str, bytes]]:
    stage = judge_stage(ModelArgs(dtype="float32"), JudgeConfig(progress=False))
    t0 = time.perf_counter()
    result = run_stage(stage, items, ShardStore(str(folder)), executor)
    seconds = time.perf_counter() - t0
    shards = {p.name: p.read_bytes() for p in sorted((folder / "judge").glob("[!.]*.parquet"))}
    return seconds, result.stats, shards


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=16)
    ap.add_argument("--tenets", type=int, default=6)
    ap.add_argument("--shard_groups", type=int, default=2)
    ap.add_argument("--tiny", action="store_true", help="2 pairs x 2 tenets; Ray only with SPL_HF_TEST_RAY=1")
    args = ap.parse_args()
    if args.tiny:
        args.pairs, args.tenets, args.shard_groups = 2, 2, 1
    items = judge_items(pairs(args.pairs), list(select_tenets("all"))[: args.tenets])
    with_ray = not args.tiny or bool(os.environ.get("SPL_HF_TEST_RAY"))
    if with_ray and importlib.util.find_spec("ray") is None:
        # `make bench` runs every script: without the [ray] extra this one measures the local runner only.
        print("Ray is not installed (pip install '.[ray]', or make test-ray): local executor only")
        with_ray = False
    runs = [("local", ExecutorArgs(shard_groups=args.shard_groups))]
    if with_ray:
        import ray

        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        for n in (1, 2):
            runs.append(
                (f"ray-{n}", ExecutorArgs(executor="ray", replicas=n, shard_groups=args.shard_groups))
            )
    print(
        f"{len(items)} scores ({args.pairs} pairs x {args.tenets} tenets), shard_groups {args.shard_groups}"
    )
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, executor in runs:
            seconds, stats, shards = run(executor, items, Path(tmp) / name)
            results[name] = (seconds, stats, shards)
            print(
                f"{name:6s} {seconds:7.1f} s  {len(items) / seconds:6.2f} scores/s  shards {stats['shards']}  "
                f"compute {stats['compute_seconds']:.1f} s  write {stats['write_seconds']:.3f} s"
            )
    reference = results["local"][2]
    assert all(r[2] == reference for r in results.values()), "executors wrote different shard bytes"
    print("shard files identical across executors: yes")
    local_s, local_stats, _ = results["local"]
    write_share = local_stats["write_seconds"] / local_s
    print(f"ratio shard writing / local stage time (target < 0.05): {write_share:.4f}x")
    if with_ray:
        local_overhead = local_s - local_stats["compute_seconds"] - local_stats["write_seconds"]
        print(f"local: overhead {local_overhead:.1f} s (model load, plan, reading shards back)")
        for n, name in ((1, "ray-1"), (2, "ray-2")):
            seconds, stats, _ = results[name]
            # The replicas work side by side: their busy time per replica, not the sum, is on the clock.
            overhead = seconds - (stats["compute_seconds"] + stats["write_seconds"]) / n
            print(
                f"{name}: overhead {overhead:.1f} s = {overhead / len(items):.3f} s per item, "
                f"{overhead / stats['shards']:.2f} s per shard (replica start and model load included)"
            )
        print(f"ratio ray-2 throughput / local: {local_s / results['ray-2'][0]:.2f}x")
        print(f"ratio ray-1 throughput / local (target >= 0.9): {local_s / results['ray-1'][0]:.2f}x")


if __name__ == "__main__":
    main()
