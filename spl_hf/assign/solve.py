"""Assign eligible judged pairs to tenets by maximum flow of minimum cost.

Saturation rule: only tenets that receive exactly `capacity` pairs are kept. Removing a tenet frees
prompts for the others, so the rule is applied by re-solving; the strategy (recorded in the result):

- ``prefilter+bounded`` (default): first drop tenets whose distinct eligible prompts are fewer than
  `capacity` (they can never fill), then solve. While some kept tenets are unsaturated: if the
  saturated ones already number ⌊F / capacity⌋, F the maximum flow of this solve, drop every
  unsaturated tenet at once; otherwise drop only the least-filled one (ties by name) and re-solve.
  Why the batch drop is safe: the maximum flow can only shrink when tenets are removed, and k
  saturated tenets carry k·capacity units, so no subset of the current tenets keeps more than
  ⌊F / capacity⌋; the saturated ones reach that bound and stay saturated on their own (their
  current flow is feasible and maximal there). Until a batch drop, each solve and drop is exactly
  that of ``prefilter+one-at-a-time``, so this strategy keeps at least as many tenets as it on
  every instance, usually in far fewer solves; on card-shaped data the first solve already
  saturates every tenet that passes the prefilter (one solve).
- ``prefilter+one-at-a-time``: after the prefilter, drop only the least-filled unsaturated tenet
  (ties by name) per re-solve: the reference, at the price of one solve per dropped tenet.
- ``prefilter+iterate``: after the prefilter, drop every unsaturated tenet at once and re-solve.
  When prompts are scarce this can drop far more tenets than necessary (0 of 49 kept on a
  card-shaped 10k-pair instance at twice the card's capacity, where one-at-a-time keeps 27),
  because tenets that compete for the same prompts are removed together. Kept for comparison.
- ``iterate``: ``prefilter+iterate`` without the prefilter.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from spl_hf.assign.certificate import (
    Certificate,
    CertificateCheck,
    DroppedTenet,
    SolveRecord,
    verify_assignment,
)
from spl_hf.assign.config import AssignConfig
from spl_hf.assign.network import (
    best_arcs,
    build_network,
    choose_tie_range,
    eligible_mask,
    num_eligible_prompts,
    tenet_pools,
)
from spl_hf.assign.residual import potentials
from spl_hf.assign.scores import ScoreTable, encode_scores
from spl_hf.assign.solvers import solve_network
from spl_hf.errors import SplHfError
from spl_hf.held import plain


@dataclass(frozen=True)
class AssignmentResult:
    assignment: (
        pa.Table
    )  # one row per assigned pair: pair_id, prompt_id, tenet, score; sorted by tenet, pair_id
    certificate: Certificate
    config: AssignConfig
    stats: dict[str, int]  # sizes of the input and of the final network
    timings: dict[str, float]  # seconds per phase; not part of any written output

    @property
    def objective(self) -> float:
        return self.certificate.objective

    @property
    def kept_tenets(self) -> tuple[str, ...]:
        return self.certificate.kept_tenets

    @property
    def dropped_tenets(self) -> tuple[DroppedTenet, ...]:
        return self.certificate.dropped_tenets

    def summary(self) -> dict:
        c = self.certificate
        return {
            "objective": c.objective,
            "assigned": c.assigned,
            "mean_abs_score": c.objective / c.assigned if c.assigned else None,
            "tenets_kept": list(c.kept_tenets),
            "tenets_dropped": [{"tenet": d.tenet, "reason": d.reason} for d in c.dropped_tenets],
            "num_tenets_kept": len(c.kept_tenets),
            "num_tenets_dropped": len(c.dropped_tenets),
            "capacity": c.capacity,
            "threshold": c.threshold,
            "seed": c.seed,
            "scale": c.scale,
            "tie_range": c.tie_range,
            "strategy": c.strategy,
            "solver": c.solver,
            "solves": len(c.solves),
            **self.stats,
        }


def _unsaturated_to_drop(strategy: str, flows: np.ndarray, capacity: int, flow_value: int) -> np.ndarray:
    """Local indices of the tenets to drop after a solve (see the module docstring)."""
    unsat = np.flatnonzero(flows < capacity)
    one_at_a_time = strategy.endswith("one-at-a-time")
    if strategy.endswith("bounded"):
        saturated = len(flows) - len(unsat)
        one_at_a_time = saturated < flow_value // capacity
    if one_at_a_time and len(unsat) > 1:
        # least-filled first; local indices follow the sorted tenet names, so ties go by name
        return unsat[[int(np.lexsort((unsat, flows[unsat]))[0])]]
    return unsat


def assign_tenets(scores: pa.Table | ScoreTable, config: AssignConfig) -> AssignmentResult:
    """Solve the assignment of `scores` under `config`, with its optimality certificate.

    Each kept tenet gets `capacity` pairs, no prompt twice, maximising Σ|score| over eligible pairs:

    >>> scores = pa.table({"pair_id": ["p1", "p2", "p3"] * 2, "prompt_id": ["q1", "q2", "q3"] * 2,
    ...                    "tenet": ["honest"] * 3 + ["kind"] * 3, "score": [0.9, -0.6, 0.2, 0.1, 0.8, -0.7]})
    >>> result = assign_tenets(scores, AssignConfig(capacity=1, threshold=0.5))
    >>> [(r["tenet"], r["pair_id"]) for r in result.assignment.to_pylist()], round(result.objective, 6)
    ([('honest', 'p1'), ('kind', 'p2')], 1.7)
    >>> verify_certificate(scores, result).ok
    True
    """
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    st = scores if isinstance(scores, ScoreTable) else encode_scores(scores)
    timings["validate"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    elig = eligible_mask(st, config.threshold)
    num_candidates = int(np.count_nonzero(np.bincount(st.tenet[elig], minlength=len(st.tenets))))
    num_prompts_all = num_eligible_prompts(st, config.threshold)
    # R is fixed on the largest network (all tenets with an eligible pair), so re-solves share it.
    tie_range = choose_tie_range(
        num_candidates, num_candidates + num_prompts_all + 2, config.scale, config.tie_range
    )
    arcs = best_arcs(st, config.threshold, config.scale, config.seed, tie_range)
    pools = tenet_pools(arcs, len(st.tenets))
    timings["reduce"] = time.perf_counter() - t0

    kept, dropped = _prefilter(st, config, pools)
    net, sol, solves = _solve_until_saturated(st, config, arcs, pools, kept, tie_range, dropped, timings)

    t0 = time.perf_counter()
    pi = potentials(net, sol.arc_flow)
    timings["potentials"] = time.perf_counter() - t0

    assignment, cert = _certificate(st, config, net, sol, pi, tie_range, dropped, solves)
    stats = {
        "rows": st.num_rows,
        "eligible_rows": int(elig.sum()),
        "eligible_pairs": int(np.count_nonzero(np.bincount(st.pair[elig], minlength=len(st.pair_ids)))),
        "eligible_prompts": num_prompts_all,
        "final_prompts": int(net.num_prompts),
        "final_arcs": int(net.num_arcs),
    }
    return AssignmentResult(assignment, cert, config, stats, timings)


def _prefilter(
    st: ScoreTable, config: AssignConfig, pools: np.ndarray
) -> tuple[np.ndarray, list[DroppedTenet]]:
    """Tenets to solve with, and those dropped before any solve (no eligible pair; prefilter: small pool)."""
    dropped = [DroppedTenet(st.tenets[i], "pool_below_capacity", 0) for i in np.flatnonzero(pools == 0)]
    kept = np.flatnonzero(pools > 0)
    if config.strategy.startswith("prefilter"):
        small = kept[pools[kept] < config.capacity]
        dropped += [DroppedTenet(st.tenets[i], "pool_below_capacity", int(pools[i])) for i in small]
        kept = kept[pools[kept] >= config.capacity]
    return kept, dropped


def _solve_until_saturated(
    st: ScoreTable,
    config: AssignConfig,
    arcs,
    pools: np.ndarray,
    kept: np.ndarray,
    tie_range: int,
    dropped: list[DroppedTenet],
    timings: dict[str, float],
):
    """Solve, drop unsaturated tenets (appended to ``dropped``), re-solve until every kept tenet is full."""
    solves: list[SolveRecord] = []
    timings["solve"] = timings["build"] = 0.0
    while True:
        t0 = time.perf_counter()
        net = build_network(arcs, kept, config.capacity, config.scale, tie_range)
        timings["build"] += time.perf_counter() - t0
        t0 = time.perf_counter()
        sol = solve_network(net, config.solver)
        timings["solve"] += time.perf_counter() - t0
        if net.num_tenets == 0:
            break  # nothing left to solve: not counted as a solve
        flows = np.bincount(net.arc_tenet[sol.arc_flow == 1], minlength=net.num_tenets)
        drop_local = _unsaturated_to_drop(config.strategy, flows, config.capacity, int(sol.flow_value))
        solve_index = len(solves)
        solves.append(
            SolveRecord(
                index=solve_index,
                tenets=int(net.num_tenets),
                flow_value=sol.flow_value,
                unsaturated=int((flows < config.capacity).sum()),
                dropped=tuple(st.tenets[kept[i]] for i in drop_local),
            )
        )
        if len(drop_local) == 0:
            break
        dropped += [
            DroppedTenet(st.tenets[kept[i]], "unsaturated", int(pools[kept[i]]), int(flows[i]), solve_index)
            for i in drop_local
        ]
        kept = np.delete(kept, drop_local)
    return net, sol, solves


def _certificate(st: ScoreTable, config: AssignConfig, net, sol, pi, tie_range: int, dropped, solves):
    """The assignment rows the final flow uses, and the certificate that proves them optimal."""
    used = np.flatnonzero(sol.arc_flow == 1)
    # Output order: tenet name, then pair id (both are sorted codes), independent of the input order.
    used = used[np.lexsort((net.arc_pair[used], net.arc_tenet[used]))]
    rows = net.arc_row[used]
    # Plain strings, whatever the scores were held as (spl_hf.held): these rows are written and read as ids.
    assignment = plain(
        st.table.take(pa.array(rows, pa.int64())).select(["pair_id", "prompt_id", "tenet", "score"])
    )
    abs_scores = np.abs(st.score[rows])
    t = net.num_tenets
    cert = Certificate(
        capacity=config.capacity,
        threshold=float(config.threshold),
        scale=config.scale,
        seed=config.seed,
        tie_range=tie_range,
        big_m=net.bounds.big_m,
        return_cost=net.bounds.return_cost,
        strategy=config.strategy,
        solver=config.solver,
        kept_tenets=tuple(st.tenets[i] for i in net.tenets),
        dropped_tenets=tuple(sorted(dropped, key=lambda d: d.tenet)),
        assigned=len(rows),
        objective=math.fsum(abs_scores.tolist()),
        objective_levels=int(np.rint(abs_scores * config.scale).astype(np.int64).sum()),
        potential_source=int(pi[0]),
        potential_sink=int(pi[-1]),
        tenet_potentials=tuple(int(x) for x in pi[1 : 1 + t]),
        prompt_ids=tuple(st.prompt_ids.take(pa.array(net.prompts, pa.int64())).to_pylist()),
        prompt_potentials=tuple(int(x) for x in pi[1 + t : -1]),
        solves=tuple(solves),
    )
    return assignment, cert


def verify_certificate(scores: pa.Table | ScoreTable, result: AssignmentResult) -> CertificateCheck:
    """Re-check `result` from the score table alone (no solver)."""
    return verify_assignment(scores, result.assignment, result.certificate)


# The statistics of an assignment that its scores give without a solve (what a given or recorded
# assignment's result carries; a solve adds the size of its final network).
GIVEN_STATS: tuple[str, ...] = (
    "rows",
    "eligible_rows",
    "eligible_pairs",
    "eligible_prompts",
    "final_prompts",
)


def given_assignment(
    scores: pa.Table | ScoreTable,
    assignment: pa.Table,
    certificate: Certificate,
    source: str = "<assignment>",
) -> AssignmentResult:
    """An assignment solved elsewhere (``spl-hf assign``), accepted only if its certificate verifies
    against `scores`; the result is what :func:`assign_tenets` would have returned for it.

    Raises ``ValueError`` naming `source` and the first failures when it does not verify.
    """
    st = scores if isinstance(scores, ScoreTable) else encode_scores(scores)
    assignment = _assignment_columns(assignment, source)
    check = verify_assignment(st, assignment, certificate)
    if not check.ok:
        raise SplHfError(
            f"{source}: the certificate does not verify against the scores: {list(check.failures)[:5]}"
        )
    elig = eligible_mask(st, certificate.threshold)
    stats = {
        "rows": st.num_rows,
        "eligible_rows": int(elig.sum()),
        "eligible_pairs": int(np.count_nonzero(np.bincount(st.pair[elig], minlength=len(st.pair_ids)))),
        "eligible_prompts": num_eligible_prompts(st, certificate.threshold),
        "final_prompts": len(certificate.prompt_ids),
    }
    return _stated_result(assignment, certificate, stats)


def recorded_assignment(
    assignment: pa.Table, certificate: Certificate, stats: dict[str, int], source: str = "<assignment>"
) -> AssignmentResult:
    """The result of an assignment this pipeline solved and verified before (a release's assign stage),
    from what it recorded: the rows, the certificate and :data:`GIVEN_STATS` of its solve.

    Nothing is verified again here (the stage that solved it did, against the same scores); the
    audit of the written dataset verifies the certificate on its own.
    """
    if not isinstance(stats, dict):
        raise SplHfError(f"{source}: the recorded statistics are not a JSON object")
    missing = [k for k in GIVEN_STATS if not isinstance(stats.get(k), int)]
    if missing:
        raise SplHfError(f"{source}: the recorded statistics lack {missing}")
    return _stated_result(
        _assignment_columns(assignment, source), certificate, {k: stats[k] for k in GIVEN_STATS}
    )


def _assignment_columns(assignment: pa.Table, source: str) -> pa.Table:
    missing = [c for c in ("pair_id", "prompt_id", "tenet", "score") if c not in assignment.column_names]
    if missing:
        raise SplHfError(f"{source}: assignment lacks columns {missing}")
    return assignment.select(["pair_id", "prompt_id", "tenet", "score"])


def _stated_result(assignment: pa.Table, certificate: Certificate, stats: dict[str, int]) -> AssignmentResult:
    """The result of an assignment with its certificate: the settings it was solved with are the certificate's."""
    config = AssignConfig(
        capacity=certificate.capacity,
        threshold=certificate.threshold,
        solver=certificate.solver,
        seed=certificate.seed,
        scale=certificate.scale,
        strategy=certificate.strategy,
        tie_range=certificate.tie_range,
    )
    ordered = assignment.sort_by([("tenet", "ascending"), ("pair_id", "ascending")])
    return AssignmentResult(ordered, certificate, config, stats, {})
