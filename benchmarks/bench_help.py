"""Wall time of every ``spl-hf [COMMAND [ACTION]] --help`` as a ratio to a bare
interpreter (``python -c pass``), both measured here, each the median of N fresh processes.

    python benchmarks/bench_help.py --runs 7          # every command and action, worst ratio last
    python benchmarks/bench_help.py --runs 5 --command "release tenets"

The ratio, not the seconds, is the figure to compare between machines: it says how much more than
starting Python the CLI costs before it can answer. The CPU-time ratio (user + system of the child
processes) is printed too: on a loaded machine it moves far less than the wall-time ratio.

Both run with bytecode caching on (into a temporary ``PYTHONPYCACHEPREFIX``, warmed by one untimed run
each), as an installed wheel runs: pip writes the ``.pyc`` files at install time. Where the environment
sets ``PYTHONDONTWRITEBYTECODE`` (this development machine does), every module of a checkout would
otherwise be compiled from source at every start, which no user's install does.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_PYCACHE = tempfile.TemporaryDirectory(prefix="bench_help_pyc_")  # removed at exit


def median_seconds(argv: list[str], runs: int) -> tuple[float, float]:
    """Median wall seconds and median CPU seconds (user + system) of ``runs`` fresh processes."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=str(ROOT), PYTHONPYCACHEPREFIX=_PYCACHE.name)
    # One untimed run writes the bytecode cache, as installing a wheel does.
    subprocess.run(argv, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    times, cpu = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run(
            argv, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True
        )
        times.append(time.perf_counter() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(times), statistics.median(cpu)


def command_paths() -> list[str]:
    """Every command and action of spl-hf (the parser built here, in this process, lists them)."""
    import argparse

    from spl_hf.cli import build_parser

    paths: list[str] = []

    def walk(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> None:
        paths.append(" ".join(path))
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, child in action.choices.items():
                    walk(child, (*path, name))

    walk(build_parser(), ())
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="processes per measurement (median)")
    parser.add_argument(
        "--command",
        default=None,
        help="subcommand whose --help to time, e.g. 'eval refusal' ('' for spl-hf --help); default: every "
        "command and action, the worst ratio last",
    )
    parser.add_argument(
        "--tiny", action="store_true", help="tiny sizes: a smoke run (the test suite runs it)"
    )
    args = parser.parse_args()
    if args.tiny:
        args.runs = 2
    commands = [args.command] if args.command is not None else command_paths()
    if args.tiny and args.command is None:
        commands = ["", "release tenets"]
    bare, bare_cpu = median_seconds([sys.executable, "-c", "pass"], args.runs)
    print(f"python -c pass: {bare:.3f} s, cpu {bare_cpu:.3f} s (median of {args.runs})")
    rows = []
    for command in commands:
        cli = [sys.executable, "-m", "spl_hf.cli", *command.split(), "--help"]
        help_s, help_cpu = median_seconds(cli, args.runs)
        name = " ".join(["spl-hf", *command.split(), "--help"])
        rows.append((help_s / bare, help_cpu / bare_cpu, name))
        print(
            f"{name:<40} {help_s:.3f} s, cpu {help_cpu:.3f} s: {help_s / bare:4.1f}x wall, {help_cpu / bare_cpu:4.1f}x cpu"
        )
    worst = max(rows)
    print(f"cpu ratio (worst): {max(r[1] for r in rows):.1f}x")
    print(f"ratio: worst of {len(rows)} ({worst[2]}) = {worst[0]:.1f}x")


if __name__ == "__main__":
    main()
