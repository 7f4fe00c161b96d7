"""One prompt's view of an assignment certificate: the arcs it has in the final network, their
integer gains and their reduced costs under the stored node potentials.

Nodes and arcs as in :mod:`spl_hf.assign.network`; reduced cost c(u,v) + π(u) − π(v) of a residual
arc. The prompt's assigned arc (tenet t → prompt p, carrying flow) has the residual arc p → t of cost
+gain; every other arc t' → p of the prompt is unused, with residual cost −gain'. Both reduced costs
are ≥ 0 in a verified certificate, and together they bound what moving p from t to t' can gain:

    gain' − gain = (π(t') − π(t)) − rc(t' → p) − rc(p → t) ≤ π(t') − π(t)

so the move would have to be paid for by the rest of a reassignment cycle, whose arcs all have
non-negative reduced cost too: no reassignment has a positive total gain. Everything is recomputed
from the stored scores and the certificate's parameters (no solver).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import pyarrow as pa

from spl_hf.assign.tiebreak import fnv1a64, tie_keys


@dataclass(frozen=True)
class PromptArc:
    tenet: str
    pair_id: str  # the prompt's best eligible pair for this tenet (the arc's pair)
    score: float
    level: int  # round(|score| · scale)
    tie: int  # key(seed, pair, tenet) mod R
    gain: int  # level · M + tie
    tenet_potential: int
    assigned: bool
    reduced_cost: (
        int | None
    )  # of the residual arc (p → t when assigned, t → p otherwise); None: prompt not in the network

    def to_dict(self) -> dict:
        return asdict(self)


def prompt_arcs(cert: dict, scores: pa.Table, prompt_id: str) -> tuple[int | None, list[PromptArc]]:
    """The prompt's potential and its arcs over the kept tenets, from its rows of the judge scores.

    ``scores`` holds at least pair_id, prompt_id, tenet and score; ``cert`` is the certificate's
    JSON. Every arc is returned as unused; the caller marks the assigned one with :func:`mark_assigned`.
    """
    rows = scores.filter(pa.compute.equal(scores.column("prompt_id"), prompt_id))
    kept = list(cert["kept_tenets"])
    ids = list(cert.get("prompt_ids", []))
    pi_p = int(cert["prompt_potentials"][ids.index(prompt_id)]) if prompt_id in ids else None
    if rows.num_rows == 0:
        return pi_p, []
    score = np.asarray(rows.column("score").to_numpy(zero_copy_only=False), dtype=np.float64)
    ok = (np.abs(score) >= float(cert["threshold"])) & np.isin(rows.column("tenet").to_pylist(), kept)
    rows, score = rows.filter(pa.array(ok)), score[ok]
    if rows.num_rows == 0:
        return pi_p, []
    pairs, tenets = rows.column("pair_id"), rows.column("tenet")
    level = np.rint(np.abs(score) * int(cert["scale"])).astype(np.int64)
    keys = tie_keys(int(cert["seed"]), fnv1a64(pairs), fnv1a64(tenets))
    tie = (keys % np.uint64(int(cert["tie_range"]))).astype(np.int64)
    best: dict[str, tuple] = {}
    for i, (pair, tenet) in enumerate(zip(pairs.to_pylist(), tenets.to_pylist())):
        rank = (int(level[i]), int(tie[i]), _neg(pair))  # (level, tie) order, then the smaller pair id
        if tenet not in best or rank > best[tenet][0]:
            best[tenet] = (rank, i, pair)
    arcs = []
    for tenet in sorted(best, key=kept.index):
        _, i, pair = best[tenet]
        gain = int(level[i]) * int(cert["big_m"]) + int(tie[i])
        pi_t = int(cert["tenet_potentials"][kept.index(tenet)])
        rc = None if pi_p is None else -gain + pi_t - pi_p
        arcs.append(
            PromptArc(tenet, pair, float(score[i]), int(level[i]), int(tie[i]), gain, pi_t, False, rc)
        )
    return pi_p, arcs


def mark_assigned(arcs: list[PromptArc], tenet: str, pi_p: int | None) -> list[PromptArc]:
    """The arcs with the assigned one's residual direction reversed (p → t, reduced cost gain + π(p) − π(t))."""
    out = []
    for a in arcs:
        if a.tenet == tenet:
            rc = None if pi_p is None else a.gain + pi_p - a.tenet_potential
            a = PromptArc(**{**a.to_dict(), "assigned": True, "reduced_cost": rc})
        out.append(a)
    return out


class _neg:
    """Reverses string order so that max() picks the smaller pair id among equal (level, tie)."""

    def __init__(self, s: str) -> None:
        self.s = s

    def __lt__(self, other: _neg) -> bool:
        return self.s > other.s

    def __gt__(self, other: _neg) -> bool:
        return self.s < other.s

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _neg) and self.s == other.s
