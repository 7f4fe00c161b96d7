"""The flow network: source → tenet (capacity C) → prompt (capacity 1) → sink (capacity 1).

Each prompt may be used once in the whole release, so for a (tenet, prompt) only that prompt's best
pair for the tenet can ever be chosen: the network has one tenet→prompt arc per such combination,
carrying that pair. Gains are integers:

    gain = round(|score| · scale) · M + (key(seed, pair, tenet) mod R),   M = 2·T·R + 1

A residual cycle or augmenting path enters each tenet at most once, so it crosses at most 2·T
tenet→prompt arcs and the tie-break part of any exchange is below M: it never outweighs a difference
of scaled scores, yet makes the optimum unique in practice (the same seed gives the same assignment
whatever solver or arc order). The same (level, tie) order, then the smaller pair id, picks the best
pair of a prompt for a tenet.

Precision: the solve is exact for scores rounded to multiples of 1/scale, so the assignment's Σ|score|
is within (pairs assigned)/scale of the optimum over the unrounded scores (at most 0.196 for 196,000
pairs at the default scale 10**6).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from spl_hf.assign.scores import ScoreTable
from spl_hf.assign.tiebreak import tie_keys
from spl_hf.errors import SplHfError

# OR-Tools refuses max|cost| · (nodes + 1) at about 2**62 (measured); keep a factor of two in hand.
SOLVER_COST_LIMIT = 2**61
# Reduced costs in the certificate are sums of three terms bounded by 2·T·gain; keep them in int64.
CERTIFICATE_LIMIT = 2**62
AUTO_TIE_RANGE_MAX = 2**20
AUTO_TIE_RANGE_MIN = 2**4


class CostRangeError(SplHfError):
    """Integer costs would overflow the solver or certificate arithmetic."""


@dataclass(frozen=True)
class CostBounds:
    big_m: int  # M: weight of one scaled-score unit
    max_gain: int
    return_cost: int  # B: cost of the sink→source return arc; B > T·max_gain makes flow value come first


def cost_bounds(num_tenets: int, scale: int, tie_range: int) -> CostBounds:
    big_m = 2 * num_tenets * tie_range + 1
    max_gain = scale * big_m + tie_range - 1
    return CostBounds(big_m, max_gain, num_tenets * max_gain + 1)


def check_cost_range(num_tenets: int, num_nodes: int, scale: int, tie_range: int) -> CostBounds:
    b = cost_bounds(num_tenets, scale, tie_range)
    if (b.max_gain + 1) * (num_nodes + 1) >= SOLVER_COST_LIMIT or 4 * b.return_cost >= CERTIFICATE_LIMIT:
        raise CostRangeError(
            f"integer costs overflow: scale={scale}, tie_range={tie_range}, {num_tenets} tenets and "
            f"{num_nodes} nodes give max gain {b.max_gain} (max gain × (nodes+1) must stay below "
            f"2**61 and 4·T·max gain below 2**62); lower --scale or tie_range"
        )
    return b


def choose_tie_range(num_tenets: int, num_nodes: int, scale: int, requested: int | None) -> int:
    """The requested R (checked), or the largest power of two in [2**4, 2**20] that fits."""
    if requested is not None:
        check_cost_range(num_tenets, num_nodes, scale, requested)
        return requested
    r = AUTO_TIE_RANGE_MAX
    while r > AUTO_TIE_RANGE_MIN:
        try:
            check_cost_range(num_tenets, num_nodes, scale, r)
            return r
        except CostRangeError:
            r //= 2
    check_cost_range(num_tenets, num_nodes, scale, r)
    return r


def eligible_mask(st: ScoreTable, threshold: float) -> np.ndarray:
    return np.abs(st.score) >= threshold


def tenet_pools(arcs: Arcs, num_tenets: int) -> np.ndarray:
    """Distinct eligible prompts per tenet: one arc exists per eligible (tenet, prompt)."""
    return np.bincount(arcs.tenet, minlength=num_tenets).astype(np.int64)


def eligible_pools(st: ScoreTable, threshold: float) -> np.ndarray:
    """Distinct eligible prompts per tenet, straight from the scores (same values as `tenet_pools`)."""
    m = eligible_mask(st, threshold)
    key = np.sort(st.tenet[m].astype(np.int64) * len(st.prompt_ids) + st.prompt[m])
    first = key[np.r_[True, key[1:] != key[:-1]]] if len(key) else key
    return np.bincount(first // max(len(st.prompt_ids), 1), minlength=len(st.tenets)).astype(np.int64)


def num_eligible_prompts(st: ScoreTable, threshold: float) -> int:
    m = eligible_mask(st, threshold)
    return int(np.count_nonzero(np.bincount(st.prompt[m], minlength=len(st.prompt_ids))))


@dataclass(frozen=True)
class Arcs:
    """Best eligible pair per (tenet, prompt), sorted by (tenet, prompt); global codes."""

    tenet: np.ndarray  # int32 into st.tenets
    prompt: np.ndarray  # int32 into st.prompt_ids
    pair: np.ndarray  # int32 into st.pair_ids
    row: np.ndarray  # int64 row of the score table
    level: np.ndarray  # int64 round(|score| · scale)
    tie: np.ndarray  # int64 key mod R


def entry_levels(st: ScoreTable, rows: np.ndarray, scale: int) -> np.ndarray:
    return np.rint(np.abs(st.score[rows]) * scale).astype(np.int64)


def entry_ties(st: ScoreTable, rows: np.ndarray, seed: int, tie_range: int) -> np.ndarray:
    keys = tie_keys(seed, st.pair_hash[st.pair[rows]], st.tenet_hash[st.tenet[rows]])
    return (keys % np.uint64(tie_range)).astype(np.int64)


def best_arcs(st: ScoreTable, threshold: float, scale: int, seed: int, tie_range: int) -> Arcs:
    rows = np.flatnonzero(eligible_mask(st, threshold)).astype(np.int64)
    tenet, prompt, pair = st.tenet[rows], st.prompt[rows], st.pair[rows]
    level = entry_levels(st, rows, scale)
    tie = entry_ties(st, rows, seed, tie_range)
    if len(rows) == 0:
        return Arcs(tenet, prompt, pair, rows, level, tie)
    # One sort by (tenet, prompt), then per-group maxima: far cheaper than a five-key lexsort.
    group = tenet.astype(np.int64) * len(st.prompt_ids) + prompt
    order = np.argsort(group, kind="stable")
    g = group[order]
    starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
    sizes = np.diff(np.r_[starts, len(g)])
    rank = level[order] * tie_range + tie[order]  # (level, tie) order; < 2**61 by the cost range check
    top = np.repeat(np.maximum.reduceat(rank, starts), sizes) == rank
    cand_pair = np.where(top, pair[order], np.iinfo(np.int32).max)
    first_pair = np.repeat(np.minimum.reduceat(cand_pair, starts), sizes)
    pick = order[top & (pair[order] == first_pair)]  # pair ids are distinct within a (tenet, prompt)
    return Arcs(tenet[pick], prompt[pick], pair[pick], rows[pick], level[pick], tie[pick])


@dataclass(frozen=True)
class Network:
    """The network over the kept tenets. Nodes: source 0, tenets 1..T, prompts T+1..T+P, sink T+P+1."""

    tenets: np.ndarray  # global tenet codes of the kept tenets, ascending
    prompts: np.ndarray  # global prompt codes with at least one arc, ascending
    capacity: int
    arc_tenet: np.ndarray  # local tenet index per arc (0..T-1); arcs sorted by (tenet, prompt)
    arc_prompt: np.ndarray  # local prompt index per arc (0..P-1)
    arc_pair: np.ndarray  # global pair code per arc
    arc_row: np.ndarray  # score-table row per arc
    gain: np.ndarray  # int64 gain per arc
    bounds: CostBounds

    @property
    def num_tenets(self) -> int:
        return len(self.tenets)

    @property
    def num_prompts(self) -> int:
        return len(self.prompts)

    @property
    def num_arcs(self) -> int:
        return len(self.gain)

    @property
    def num_nodes(self) -> int:
        return self.num_tenets + self.num_prompts + 2


def build_network(arcs: Arcs, kept: np.ndarray, capacity: int, scale: int, tie_range: int) -> Network:
    """Restrict `arcs` to the kept tenets (global codes) and attach integer gains."""
    kept = np.unique(np.asarray(kept, dtype=np.int32))
    is_kept = np.zeros(int(arcs.tenet.max(initial=-1)) + 1 if len(arcs.tenet) else 0, bool)
    is_kept[kept[kept < len(is_kept)]] = True
    sel = is_kept[arcs.tenet] if len(arcs.tenet) else np.zeros(0, bool)
    present = np.bincount(arcs.prompt[sel], minlength=int(arcs.prompt.max(initial=-1)) + 1) > 0
    prompts = np.flatnonzero(present)
    arc_prompt = (np.cumsum(present) - 1)[arcs.prompt[sel]]
    arc_tenet = np.searchsorted(kept, arcs.tenet[sel]).astype(np.int32)
    bounds = check_cost_range(len(kept), len(kept) + len(prompts) + 2, scale, tie_range)
    return Network(
        tenets=kept,
        prompts=prompts.astype(np.int32),
        capacity=capacity,
        arc_tenet=arc_tenet,
        arc_prompt=arc_prompt.astype(np.int32),
        arc_pair=arcs.pair[sel],
        arc_row=arcs.row[sel],
        gain=arcs.level[sel] * bounds.big_m + arcs.tie[sel],
        bounds=bounds,
    )
