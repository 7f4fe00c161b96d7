"""A fake sweep of refusal metrics files, laid out as `spl-hf eval refusal` writes them."""

from __future__ import annotations

import json
from pathlib import Path

N = {"or_bench_hard_1k": 1319, "or_bench_toxic": 655}
# Per seed: refusal and at-limit counts (made up for tests; not measurements).
COUNTS = {
    "prompt_shared": {
        1: {"or_bench_hard_1k": (537, 927), "or_bench_toxic": (555, 117)},
        2: {"or_bench_hard_1k": (534, 925), "or_bench_toxic": (556, 118)},
        3: {"or_bench_hard_1k": (537, 924), "or_bench_toxic": (558, 121)},
        4: {"or_bench_hard_1k": (539, 926), "or_bench_toxic": (557, 121)},
        5: {"or_bench_hard_1k": (545, 920), "or_bench_toxic": (557, 120)},
    },
    "judge": {
        1: {"or_bench_hard_1k": (600, 876), "or_bench_toxic": (553, 110)},
        2: {"or_bench_hard_1k": (605, 871), "or_bench_toxic": (554, 111)},
        3: {"or_bench_hard_1k": (609, 873), "or_bench_toxic": (556, 109)},
        4: {"or_bench_hard_1k": (604, 867), "or_bench_toxic": (555, 112)},
        5: {"or_bench_hard_1k": (603, 870), "or_bench_toxic": (556, 114)},
    },
}


def metrics(prompt_set: str, seed: int, n_ref: int, at_limit: int, n: int | None = None) -> dict:
    n = n or N[prompt_set]
    return {
        "prompt_set": prompt_set,
        "n": n,
        "n_refusals": n_ref,
        "refusal_rate": n_ref / n,
        "at_limit": at_limit,
        "at_limit_rate": at_limit / n,
        "matcher": "xstest",
        "seed": seed,
        "refusal_rate_at_limit": 0.5,
    }


def write_runs(root: Path, counts: dict = COUNTS) -> Path:
    for cond, seeds in counts.items():
        for seed, sets in seeds.items():
            for ps, (n_ref, lim) in sets.items():
                d = root / cond / f"seed{seed}" / "eval" / ps
                d.mkdir(parents=True, exist_ok=True)
                (d / "metrics.json").write_text(json.dumps(metrics(ps, seed, n_ref, lim)))
    return root
