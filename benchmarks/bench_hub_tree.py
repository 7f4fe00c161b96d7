"""Benchmark of the local Hub server's ``tree?expand=true``: each listed path's last commit.

Builds an in-memory history of N commits, each adding one file (N files in 7 folders, every 10th
commit also editing an older file), and times, in the same run:

- ``per_path``: the algorithm before, kept here as the baseline: for each path, walk the history
  comparing that path's full state between neighbours (paths x commits x files);
- ``one_walk``: ``spl_hf_hub_server.routes.files.last_commits``, one diff per commit for the
  whole listing (commits x files).

Prints seconds, the ratio per_path/one_walk and whether both name the same commit for every path.

    .venv/bin/python benchmarks/bench_hub_tree.py              # N = 154 (the review's repo), 300
    .venv/bin/python benchmarks/bench_hub_tree.py --sizes 1000
"""

from __future__ import annotations

import argparse
import itertools
import time

from spl_hf_hub_server.routes.files import _folders, last_commits
from spl_hf_hub_server.store import Commit, FileEntry


def history(n: int) -> list[Commit]:
    """Newest first, as ``Store.history`` returns it."""
    tree: dict[str, FileEntry] = {}
    out = [Commit("0" * 40, [], "initial commit", "", 0.0, {})]
    for i in range(n):
        tree = dict(tree)
        for j, path in ((i, f"d{i % 7}/f{i:04d}.txt"), (i - 9, f"d{(i - 9) % 7}/f{i - 9:04d}.txt")):
            if j == i or (i % 10 == 9 and j >= 0):
                oid = f"{i:032x}{j:032x}"
                tree[path] = FileEntry(path, oid, 1, False, oid[:40])
        out.append(Commit(f"{i + 1:040x}", [out[-1].sha], f"c{i}", "", float(i), tree))
    return out[::-1]


def per_path(hist: list[Commit], path: str) -> str:
    """The algorithm before (one path): neighbours compared on the path's sorted state."""

    def state(c: Commit) -> list:
        return [(p, e.oid) for p, e in sorted(c.tree.items()) if p == path or p.startswith(path + "/")]

    for newer, older in itertools.pairwise(hist):
        if state(newer) != state(older):
            return newer.sha
    return hist[-1].sha


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="154,300", help="commits (= files), comma-separated")
    ap.add_argument("--tiny", action="store_true", help="tiny sizes: a smoke run (the test suite runs it)")
    args = ap.parse_args()
    if args.tiny:
        args.sizes = "40"
    ratios = []
    print(f"{'N':>6} {'paths':>6} {'per_path s':>11} {'one_walk s':>11} {'ratio':>8} same")
    for n in (int(s) for s in args.sizes.split(",") if s):
        hist = history(n)
        paths = sorted(hist[0].tree) + sorted(_folders(hist[0].tree))
        t0 = time.perf_counter()
        before = {p: per_path(hist, p) for p in paths}
        slow = time.perf_counter() - t0
        t0 = time.perf_counter()
        after = {p: c["id"] for p, c in last_commits(hist, paths).items()}
        fast = time.perf_counter() - t0
        print(f"{n:>6} {len(paths):>6} {slow:>11.3f} {fast:>11.4f} {slow / fast:>8.0f} {before == after}")
        ratios.append((n, slow / fast))
    n, ratio = ratios[-1]
    print(f"ratio: per-path walks / one walk at {n} commits = {ratio:.1f}x")


if __name__ == "__main__":
    main()
