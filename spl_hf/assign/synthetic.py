"""Synthetic score tables shaped like the constitution-v3 DPO card, for benchmarks and tests.

Shape at full scale (334,610 pairs): about 1.3 pairs per prompt, 82% of pairs eligible for some
tenet with about 8 eligible tenets each, 60 tenets of which 11 have distinct-prompt pools below the
capacity C = 4000·N/334,610, eligible |score| in [0.5, 1] with mean 0.85, plus a few sub-threshold
rows per pair. Rows are shuffled so nothing may rely on the input order.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

FULL_PAIRS = 334_610
FULL_CAPACITY = 4_000


def card_capacity(num_pairs: int) -> int:
    return max(1, round(FULL_CAPACITY * num_pairs / FULL_PAIRS))


def card_shaped_scores(
    num_pairs: int,
    *,
    seed: int = 0,
    num_tenets: int = 60,
    num_small: int = 11,
    capacity: int | None = None,
    pairs_per_prompt: float = 1.3,
    eligible_share: float = 0.82,
    tenets_per_pair: float = 8.0,
    ineligible_per_pair: float = 2.0,
    decimals: int | None = None,
) -> pa.Table:
    """A score table (pair_id, prompt_id, tenet, score); `decimals` rounds scores to create ties."""
    rng = np.random.default_rng(seed)
    cap = capacity or card_capacity(num_pairs)
    num_prompts = max(1, round(num_pairs / pairs_per_prompt))
    prompt_of = np.concatenate(
        [
            np.arange(min(num_prompts, num_pairs)),
            rng.integers(0, num_prompts, max(0, num_pairs - num_prompts)),
        ]
    )
    rng.shuffle(prompt_of)
    eligible_pairs = rng.random(num_pairs) < eligible_share
    n_elig = max(1, int(eligible_pairs.sum()))
    # Small tenets get fewer expected entries than the capacity, so their pools cannot fill it.
    p_small = rng.uniform(0.3, 0.9, num_small) * cap / n_elig
    w = rng.uniform(0.5, 1.5, num_tenets - num_small)
    p_large = w / w.sum() * max(tenets_per_pair - p_small.sum(), 0.0)
    p = np.minimum(np.concatenate([p_large, p_small])[rng.permutation(num_tenets)], 1.0)
    u = rng.random((num_pairs, num_tenets), dtype=np.float32)
    elig = (u < p) & eligible_pairs[:, None]
    q = ineligible_per_pair / max(num_tenets - tenets_per_pair, 1.0)
    inel = ~elig & (rng.random((num_pairs, num_tenets), dtype=np.float32) < q)
    pair_e, tenet_e = np.nonzero(elig)
    pair_i, tenet_i = np.nonzero(inel)
    mag = np.concatenate([0.5 + 0.5 * rng.beta(2.1, 0.9, len(pair_e)), rng.uniform(0.0, 0.5, len(pair_i))])
    sign = np.where(rng.random(len(mag)) < 0.7, 1.0, -1.0)
    score = sign * mag
    if decimals is not None:
        score = np.round(score, decimals)
    pair = np.concatenate([pair_e, pair_i])
    tenet = np.concatenate([tenet_e, tenet_i])
    order = rng.permutation(len(pair))
    pair_names = pa.array([f"pair-{i:07d}" for i in range(num_pairs)])
    prompt_names = pa.array([f"prompt-{i:07d}" for i in range(num_prompts)])
    tenet_names = pa.array([f"tenet_{i:02d}" for i in range(num_tenets)])
    return pa.table(
        {
            "pair_id": pair_names.take(pa.array(pair[order])),
            "prompt_id": prompt_names.take(pa.array(prompt_of[pair[order]])),
            "tenet": tenet_names.take(pa.array(tenet[order])),
            "score": pa.array(score[order], pa.float64()),
        }
    )
