"""Wall time of every ``spl-hf [COMMAND [ACTION]] --help`` as a ratio to a bare
interpreter (``python -c pass``), both measured here, each the median of N fresh processes, the
two alternated process by process.

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


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=str(ROOT), PYTHONPYCACHEPREFIX=_PYCACHE.name)
    return env


def _timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(argv, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def paired_medians(argv: list[str], bare: list[str], runs: int) -> tuple[float, float, float, float]:
    """Median wall and CPU seconds of ``argv`` and of ``bare``, their runs alternated.

    Alternating one process of each keeps a drift in the machine's speed (a virtual machine's neighbours,
    frequency changes) out of the ratio: a baseline measured once at the start moved the ratios of
    later commands by up to a third on this machine.
    """
    env = _env()
    for cmd in (bare, argv):  # one untimed run each writes the bytecode cache, as installing a wheel does
        _timed(cmd, env)
    ours, base = [], []
    for _ in range(runs):
        base.append(_timed(bare, env))
        ours.append(_timed(argv, env))
    (wall, cpu), (bare_wall, bare_cpu) = zip(*ours), zip(*base)
    median = statistics.median
    return median(wall), median(cpu), median(bare_wall), median(bare_cpu)


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
    bare_cmd = [sys.executable, "-c", "pass"]
    print(f"baseline: python -c pass, its runs alternated with each command's ({args.runs} of each, medians)")
    rows = []
    for command in commands:
        cli = [sys.executable, "-m", "spl_hf.cli", *command.split(), "--help"]
        help_s, help_cpu, bare, bare_cpu = paired_medians(cli, bare_cmd, args.runs)
        name = " ".join(["spl-hf", *command.split(), "--help"])
        rows.append((help_s / bare, help_cpu / bare_cpu, name))
        print(
            f"{name:<40} {help_s:.3f} s (bare {bare:.3f}), cpu {help_cpu:.3f} s: "
            f"{help_s / bare:4.1f}x wall, {help_cpu / bare_cpu:4.1f}x cpu"
        )
    worst = max(rows)
    print(f"cpu ratio (worst): {max(r[1] for r in rows):.1f}x")
    print(f"ratio: worst of {len(rows)} ({worst[2]}) = {worst[0]:.1f}x")


if __name__ == "__main__":
    main()
