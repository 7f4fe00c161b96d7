"""Table XIV of the source paper: responses that stopped at the token limit, per seed and pooled.

One pure definition for ``eval at-limit`` and ``report seeds``: the pooled ("all" seeds) row of a
condition and prompt set is the sum of its seeds' counts, its percentage recomputed from the sums.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

ALL_SEEDS = "all"

__all__ = ["ALL_SEEDS", "at_limit_row", "at_limit_rows"]


def at_limit_row(cond: str, seed: int | str, ps: str, n: int, k: int, limit: int | None) -> dict[str, Any]:
    """One row of the table.

    >>> at_limit_row("judge", 1, "or_bench_hard_1k", 1319, 927, 200)["at_limit_pct"]
    70.28
    """
    return {
        "condition": cond,
        "seed": seed,
        "prompt_set": ps,
        "n": n,
        "at_limit": k,
        "at_limit_pct": round(100.0 * k / n, 2) if n else None,
        "max_new_tokens": limit,
    }


def at_limit_rows(runs: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per (condition, prompt set), a row per seed then the pooled row; conditions, sets, seeds sorted.

    ``runs`` are mappings with ``condition``, ``seed``, ``prompt_set``, ``n``, ``at_limit`` and
    optionally ``max_new_tokens`` (one per evaluated run and prompt set).

    >>> runs = [{"condition": "judge", "seed": s, "prompt_set": "toxic", "n": 655, "at_limit": k}
    ...         for s, k in ((2, 118), (1, 117))]
    >>> [(r["seed"], r["n"], r["at_limit"]) for r in at_limit_rows(runs)]
    [(1, 655, 117), (2, 655, 118), ('all', 1310, 235)]
    """
    runs = list(runs)
    out: list[dict[str, Any]] = []
    for cond in sorted({r["condition"] for r in runs}):
        mine = [r for r in runs if r["condition"] == cond]
        for ps in sorted({r["prompt_set"] for r in mine}):
            part = sorted((r for r in mine if r["prompt_set"] == ps), key=lambda r: r["seed"])
            limit = part[0].get("max_new_tokens")
            out += [
                at_limit_row(cond, r["seed"], ps, r["n"], r["at_limit"], r.get("max_new_tokens"))
                for r in part
            ]
            n, k = sum(r["n"] for r in part), sum(r["at_limit"] for r in part)
            out.append(at_limit_row(cond, ALL_SEEDS, ps, n, k, limit))
    return out
