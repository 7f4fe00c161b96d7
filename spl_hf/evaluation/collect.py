"""Evaluation results gathered from a sweep laid out as ``<runs>/<condition>/seed<k>/eval/<set>/``.

:func:`at_limit_table` gives the paper's Table XIV: per condition and seed, how many responses of
each prompt set stopped at the token limit, with the pooled "all seeds" row.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from spl_hf.errors import SplHfError
from spl_hf.evaluation.job import METRICS
from spl_hf.evaluation.run_folder import EVAL_DIR
from spl_hf.stats import at_limit_rows
from spl_hf.train import seed_of


def collect_metrics(runs: str | Path) -> list[dict[str, Any]]:
    """Every ``metrics.json`` under ``runs`` with its condition and seed (from the folder names)."""
    root = Path(runs)
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: no such runs folder")
    found = []
    for path in sorted(root.glob(f"*/*/{EVAL_DIR}/*/{METRICS}")):
        seed_dir = path.parents[2]
        seed = seed_of(seed_dir.name)
        if seed is None:
            continue
        try:
            metrics = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise SplHfError(f"{path}: not valid JSON ({exc.msg})") from None
        for key in ("prompt_set", "n", "at_limit"):
            if key not in metrics:
                raise SplHfError(f"{path}: lacks {key!r}")
        found.append({"condition": seed_dir.parent.name, "seed": seed, "path": str(path), **metrics})
    if not found:
        raise SplHfError(f"{root}: no <condition>/seed<k>/{EVAL_DIR}/<prompt_set>/{METRICS} found")
    return found


def _check_complete(rows: Sequence[dict[str, Any]]) -> None:
    seeds: dict[str, set[int]] = {}
    sets: dict[tuple[str, int], set[str]] = {}
    for r in rows:
        seeds.setdefault(r["condition"], set()).add(r["seed"])
        sets.setdefault((r["condition"], r["seed"]), set()).add(r["prompt_set"])
    every_seed = set().union(*seeds.values())
    for cond, s in sorted(seeds.items()):
        if s != every_seed:
            raise SplHfError(
                f"condition {cond!r} lacks seed(s) {sorted(every_seed - s)} that other conditions have"
            )
    every_set = set().union(*sets.values())
    for (cond, seed), s in sorted(sets.items()):
        if s != every_set:
            raise SplHfError(f"{cond}/seed{seed}: no evaluation of prompt set(s) {sorted(every_set - s)}")


def at_limit_table(runs: str | Path) -> list[dict[str, Any]]:
    """Rows (condition, seed or "all", prompt_set, n, at_limit, at_limit_pct), conditions and seeds sorted."""
    rows = collect_metrics(runs)
    _check_complete(rows)
    return at_limit_rows(rows)


def format_at_limit(table: Sequence[dict[str, Any]]) -> str:
    """Table XIV as text: one block per condition, a column pair (count, %) per prompt set."""
    lines = []
    for cond in dict.fromkeys(r["condition"] for r in table):
        mine = [r for r in table if r["condition"] == cond]
        sets = list(dict.fromkeys(r["prompt_set"] for r in mine))
        limit = mine[0]["max_new_tokens"]
        lines.append(f"{cond}: responses reaching the {limit}-token limit")
        lines.append("  seed      " + "".join(f"{s + ' at limit':>26}{'%':>8}" for s in sets))
        for seed in dict.fromkeys(r["seed"] for r in mine):
            cells = []
            for s in sets:
                r = next(x for x in mine if x["seed"] == seed and x["prompt_set"] == s)
                pct = "-" if r["at_limit_pct"] is None else f"{r['at_limit_pct']:.2f}"
                cells.append(f"{r['at_limit']:>15,} / {r['n']:<8,}{pct:>8}")
            label = "all seeds" if seed == "all" else str(seed)
            lines.append(f"  {label:<10}" + "".join(cells))
    return "\n".join(lines)
