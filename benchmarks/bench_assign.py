"""Benchmark of the tenet assignment on synthetic card-shaped instances.

For each size N (pairs) a fresh subprocess generates an instance (see `spl_hf.assign.synthetic`),
solves it with OR-Tools and, up to --networkx_max pairs, with the networkx reference, and prints
build/solve/verify seconds, the networkx/OR-Tools solve-time ratio, whether objectives and
assignments are equal, and the subprocess's peak resident memory.

    .venv/bin/python benchmarks/bench_assign.py                       # 10k, 30k, 100k, 334,610
    .venv/bin/python benchmarks/bench_assign.py --sizes 10000 --networkx_max 10000
    .venv/bin/python benchmarks/bench_assign.py --sizes '' --scarce 10000   # strategies, scarce prompts

--scarce N solves a card-shaped N-pair instance at twice the card's capacity (prompts binding) with
each saturation strategy and prints tenets kept, solves and seconds per strategy.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

DEFAULT_SIZES = (10_000, 30_000, 100_000, 334_610)


def one(size: int, seed: int, with_networkx: bool) -> dict:
    from spl_hf.assign import AssignConfig, assign_tenets, encode_scores, verify_certificate
    from spl_hf.assign.synthetic import card_capacity, card_shaped_scores

    t0 = time.perf_counter()
    table = card_shaped_scores(size, seed=seed)
    gen = time.perf_counter() - t0
    capacity = card_capacity(size)
    t0 = time.perf_counter()
    st = encode_scores(table)
    validate = time.perf_counter() - t0
    t0 = time.perf_counter()
    fast = assign_tenets(st, AssignConfig(capacity=capacity, solver="ortools"))
    total = validate + time.perf_counter() - t0
    t0 = time.perf_counter()
    check = verify_certificate(st, fast)
    verify = time.perf_counter() - t0
    out = {
        "pairs": size,
        "rows": table.num_rows,
        "capacity": capacity,
        "arcs": fast.stats["final_arcs"],
        "prompts": fast.stats["final_prompts"],
        "kept": len(fast.kept_tenets),
        "dropped": len(fast.dropped_tenets),
        "objective": fast.objective,
        "generate_s": gen,
        "validate_s": validate,
        "reduce_build_s": fast.timings["reduce"] + fast.timings["build"],
        "ortools_solve_s": fast.timings["solve"],
        "potentials_s": fast.timings["potentials"],
        "ortools_total_s": total,
        "verify_s": verify,
        "certificate_ok": check.ok,
    }
    if with_networkx:
        ref = assign_tenets(st, AssignConfig(capacity=capacity, solver="networkx"))
        out["networkx_solve_s"] = ref.timings["solve"]
        out["ratio_networkx_over_ortools"] = ref.timings["solve"] / fast.timings["solve"]
        out["objective_equal"] = ref.objective == fast.objective
        out["assignment_identical"] = ref.assignment.equals(fast.assignment)
    out["peak_rss_gb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    return out


def scarce(size: int, seed: int) -> None:
    from spl_hf.assign import STRATEGIES, AssignConfig, assign_tenets, encode_scores, verify_certificate
    from spl_hf.assign.synthetic import card_capacity, card_shaped_scores

    st = encode_scores(card_shaped_scores(size, seed=seed))
    capacity = 2 * card_capacity(size)
    print(f"scarce instance: {size} pairs, capacity {capacity} (twice the card's), seed {seed}")
    print(f"{'strategy':>24} {'kept':>4} {'solves':>6} {'seconds':>7} {'objective':>10} {'cert':>5}")
    for strategy in STRATEGIES:
        t0 = time.perf_counter()
        r = assign_tenets(st, AssignConfig(capacity=capacity, strategy=strategy))
        seconds = time.perf_counter() - t0
        ok = verify_certificate(st, r).ok
        print(
            f"{strategy:>24} {len(r.kept_tenets):>4} {len(r.certificate.solves):>6} {seconds:7.2f} "
            f"{r.objective:10.2f} {ok!s:>5}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", default=",".join(map(str, DEFAULT_SIZES)), help="comma-separated pair counts"
    )
    parser.add_argument(
        "--networkx_max", type=int, default=30_000, help="largest size also solved by networkx"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the synthetic instances")
    parser.add_argument(
        "--scarce", type=int, help="also compare strategies on this size at twice the capacity"
    )
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    parser.add_argument(
        "--tiny", action="store_true", help="tiny sizes: a smoke run (the test suite runs it)"
    )
    args = parser.parse_args()
    if args.tiny:
        args.sizes, args.networkx_max, args.scarce = "2000", 2000, None
    if args.one is not None:
        print(json.dumps(one(args.one, args.seed, args.one <= args.networkx_max)))
        return
    print(f"cpus available: {len(os.sched_getaffinity(0))}; load average: {os.getloadavg()}")
    header = (
        f"{'pairs':>8} {'arcs':>9} {'C':>5} {'kept':>4} {'validate':>8} {'reduce':>7} {'ortools':>8} "
        f"{'potent.':>7} {'total':>7} {'verify':>7} {'networkx':>9} {'nx/ort':>7} {'obj=':>5} {'same':>5} "
        f"{'cert':>5} {'peakGB':>6}"
    )
    print(header)
    ratios: list[tuple[int, float]] = []
    for size in [int(s) for s in args.sizes.split(",") if s]:
        cmd = [sys.executable, __file__, "--one", str(size), "--seed", str(args.seed)]
        cmd += ["--networkx_max", str(args.networkx_max)]
        r = json.loads(
            subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.splitlines()[-1]
        )
        nx_s = f"{r['networkx_solve_s']:9.2f}" if "networkx_solve_s" in r else f"{'-':>9}"
        ratio = f"{r['ratio_networkx_over_ortools']:7.0f}" if "networkx_solve_s" in r else f"{'-':>7}"
        if "networkx_solve_s" in r:
            ratios.append((r["pairs"], r["ratio_networkx_over_ortools"]))
        eq = str(r.get("objective_equal", "-"))
        same = str(r.get("assignment_identical", "-"))
        print(
            f"{r['pairs']:>8} {r['arcs']:>9} {r['capacity']:>5} {r['kept']:>4} {r['validate_s']:8.2f} "
            f"{r['reduce_build_s']:7.2f} {r['ortools_solve_s']:8.2f} {r['potentials_s']:7.2f} "
            f"{r['ortools_total_s']:7.2f} {r['verify_s']:7.2f} {nx_s} {ratio} {eq:>5} {same:>5} "
            f"{r['certificate_ok']!s:>5} {r['peak_rss_gb']:6.2f}",
            flush=True,
        )
    print("seconds; total = validate + reduce/build + OR-Tools solve + potentials (one process, wall)")
    if ratios:
        size, ratio = ratios[-1]
        print(f"ratio: networkx solve / OR-Tools solve at {size:,} pairs = {ratio:.1f}x")
    if args.scarce:
        scarce(args.scarce, args.seed)


if __name__ == "__main__":
    main()
