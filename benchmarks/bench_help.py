"""Wall time of ``spl-hf --help`` (and optionally ``spl-hf <command> --help``) as a ratio to a bare
interpreter (``python -c pass``), both measured here, each the median of N fresh processes.

    python benchmarks/bench_help.py --runs 7
    python benchmarks/bench_help.py --runs 5 --command "release tenets"

The ratio, not the seconds, is the figure to compare between machines: it says how much more than
starting Python the CLI costs before it can answer. The CPU-time ratio (user + system of the child
processes) is printed too: on a loaded machine it moves far less than the wall-time ratio.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def median_seconds(argv: list[str], runs: int) -> tuple[float, float]:
    """Median wall seconds and median CPU seconds (user + system) of ``runs`` fresh processes."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    times, cpu = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(times), statistics.median(cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="processes per measurement (median)")
    parser.add_argument("--command", default="", help="subcommand whose --help to time, e.g. 'eval refusal'")
    parser.add_argument(
        "--tiny", action="store_true", help="tiny sizes: a smoke run (the test suite runs it)"
    )
    args = parser.parse_args()
    if args.tiny:
        args.runs = 2
    bare, bare_cpu = median_seconds([sys.executable, "-c", "pass"], args.runs)
    cli = [sys.executable, "-m", "spl_hf.cli", *args.command.split(), "--help"]
    help_s, help_cpu = median_seconds(cli, args.runs)
    name = " ".join(["spl-hf", *args.command.split(), "--help"])
    print(f"python -c pass: {bare:.3f} s, cpu {bare_cpu:.3f} s (median of {args.runs})")
    print(f"{name}: {help_s:.3f} s, cpu {help_cpu:.3f} s (median of {args.runs})")
    print(f"cpu ratio: {help_cpu / bare_cpu:.1f}x")
    print(f"ratio: {help_s / bare:.1f}x")


if __name__ == "__main__":
    main()
