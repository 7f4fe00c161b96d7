"""The SPL release's seeded draws: which prompts of each source are used, and which get candidates.

Pure functions of the ids and the seed (never of row order), so a draw is the same on any machine, in
any order the prompts arrive, and after a resume.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any


def draw(ids: list[str], n: int, seed: int | str) -> set[str]:
    """A seeded draw of ``n`` ids that does not depend on their order (smallest keyed hashes)."""
    keyed = sorted(ids, key=lambda i: hashlib.sha256(f"{seed}\0{i}".encode()).hexdigest())
    return set(keyed[:n])


def draw_prompts(
    kept: Any, sizes: Mapping[str, int], seed: int, names: Sequence[str]
) -> tuple[Any, dict[str, Any]]:
    """The seeded per-source sample (``sizes``: prompts per source) of ``kept`` (an Arrow table of the
    decontaminated prompts), and its record: prompts drawn per source, the sizes, the sources left empty."""
    import pyarrow as pa
    import pyarrow.compute as pc

    sources = kept.column("source").to_pylist()
    ids = kept.column("prompt_id").to_pylist()
    keep = [True] * kept.num_rows
    for name, n in sizes.items():
        chosen = draw([i for i, s in zip(ids, sources) if s == name], n, seed)
        keep = [k and (s != name or i in chosen) for k, i, s in zip(keep, ids, sources)]
    drawn = kept.filter(pa.array(keep, pa.bool_()))
    left = pc.value_counts(drawn.column("source")).to_pylist() if drawn.num_rows else []
    per = {str(v["values"]): int(v["counts"]) for v in left}
    counts = {name: per.get(name, 0) for name in names}
    empty = [name for name in names if not counts[name]]
    return drawn, {"drawn": counts, "pool_sizes": dict(sizes), "empty_sources": empty}


def with_candidates(
    prompts: list[dict], fractions: Mapping[str, Fraction], seed: int
) -> tuple[list[dict], dict[str, int]]:
    """The drawn prompts that get candidates (a seeded choice of each source's candidate fraction,
    independent of row order), and per source how many get none."""
    chosen: set[str] = set()
    without: dict[str, int] = {}
    for name in dict.fromkeys(p["source"] for p in prompts):
        ids = [p["prompt_id"] for p in prompts if p["source"] == name]
        share = fractions.get(name, Fraction(1))
        n = math.floor(share * len(ids) + Fraction(1, 2))  # rounded half up, exactly
        # A seed of its own, so the choice is not the first n of the pool draw's order.
        picked = draw(ids, n, f"candidates:{seed}") if n < len(ids) else set(ids)
        chosen |= picked
        without[name] = len(ids) - len(picked)
    return [p for p in prompts if p["prompt_id"] in chosen], without
