"""Both solvers agree, match brute force on tiny inputs, and certify their answers."""

from __future__ import annotations

import itertools

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hst

from spl_hf.assign import AssignConfig, assign_tenets, encode_scores, verify_certificate
from spl_hf.assign.network import best_arcs, build_network
from spl_hf.assign.residual import NegativeCycleError, potentials, reduced_costs
from spl_hf.assign.solvers import solve_network
from spl_hf.assign.synthetic import card_shaped_scores


def small_instance(seed: int, pairs: int = 60, tenets: int = 5, decimals: int | None = 1) -> pa.Table:
    return card_shaped_scores(
        pairs, seed=seed, num_tenets=tenets, num_small=1, capacity=5, tenets_per_pair=2.5, decimals=decimals
    )


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=hst.integers(0, 10_000),
    pairs=hst.integers(5, 80),
    capacity=hst.integers(1, 8),
    decimals=hst.sampled_from([None, 1, 2]),
)
def test_solvers_return_identical_assignments(
    seed: int, pairs: int, capacity: int, decimals: int | None
) -> None:
    table = small_instance(seed, pairs, decimals=decimals)
    results = {
        solver: assign_tenets(table, AssignConfig(capacity=capacity, solver=solver))
        for solver in ("ortools", "networkx")
    }
    a, b = results["ortools"], results["networkx"]
    assert a.objective == b.objective
    assert a.certificate.objective_levels == b.certificate.objective_levels
    assert a.assignment.equals(b.assignment)
    assert a.kept_tenets == b.kept_tenets
    assert a.certificate.prompt_potentials == b.certificate.prompt_potentials
    for r in results.values():
        check = verify_certificate(table, r)
        assert check.ok, check.failures
        prompts = r.assignment.column("prompt_id").to_pylist()
        assert len(set(prompts)) == len(prompts)
        pairs_out = r.assignment.column("pair_id").to_pylist()
        assert len(set(pairs_out)) == len(pairs_out)
        counts = {t: 0 for t in r.kept_tenets}
        for t in r.assignment.column("tenet").to_pylist():
            counts[t] += 1
        assert set(counts.values()) <= {capacity}


def brute_force(table: pa.Table, capacity: int, threshold: float, scale: int) -> tuple[int, int]:
    """Max over all feasible assignments of (pairs assigned, Σ round(|score|·scale))."""
    rows = table.to_pylist()
    options: dict[str, list[tuple[str, int]]] = {}
    prompt_of: dict[str, str] = {}
    for r in rows:
        prompt_of[r["pair_id"]] = r["prompt_id"]
        if abs(r["score"]) >= threshold:
            options.setdefault(r["pair_id"], []).append((r["tenet"], round(abs(r["score"]) * scale)))
    pairs = sorted(options)
    best = (0, 0)
    for choice in itertools.product(*[[None, *options[p]] for p in pairs]):
        used_prompts: set[str] = set()
        load: dict[str, int] = {}
        ok, count, total = True, 0, 0
        for p, c in zip(pairs, choice, strict=True):
            if c is None:
                continue
            if prompt_of[p] in used_prompts or load.get(c[0], 0) == capacity:
                ok = False
                break
            used_prompts.add(prompt_of[p])
            load[c[0]] = load.get(c[0], 0) + 1
            count, total = count + 1, total + c[1]
        if ok:
            best = max(best, (count, total))
    return best


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("solver", ["ortools", "networkx"])
def test_single_solve_matches_brute_force(seed: int, solver: str) -> None:
    rng = np.random.default_rng(seed)
    n = 7
    prompt = [f"q{int(i)}" for i in rng.integers(0, 5, n)]
    rows = [
        {
            "pair_id": f"p{i}",
            "prompt_id": prompt[i],
            "tenet": t,
            "score": float(np.round(rng.uniform(-1, 1), 2)),
        }
        for i in range(n)
        for t in ("a", "b", "c")
        if rng.random() < 0.6
    ]
    table = pa.Table.from_pylist(rows)
    capacity, threshold, scale = 2, 0.3, 100
    st = encode_scores(table)
    arcs = best_arcs(st, threshold, scale, 42, 2**10)
    net = build_network(arcs, np.arange(len(st.tenets)), capacity, scale, 2**10)
    sol = solve_network(net, solver)
    levels = int(arcs.level[np.isin(arcs.tenet, net.tenets)][sol.arc_flow == 1].sum())
    assert (sol.flow_value, levels) == brute_force(table, capacity, threshold, scale)


def test_kept_tenets_match_brute_force_when_all_saturate() -> None:
    rows = [
        {"pair_id": "p1", "prompt_id": "q1", "tenet": "a", "score": 0.9},
        {"pair_id": "p1", "prompt_id": "q1", "tenet": "b", "score": -0.8},
        {"pair_id": "p2", "prompt_id": "q1", "tenet": "a", "score": 0.95},
        {"pair_id": "p3", "prompt_id": "q2", "tenet": "a", "score": 0.6},
        {"pair_id": "p3", "prompt_id": "q2", "tenet": "b", "score": 0.7},
        {"pair_id": "p4", "prompt_id": "q3", "tenet": "b", "score": -0.55},
        {"pair_id": "p5", "prompt_id": "q4", "tenet": "a", "score": 0.5},
        {"pair_id": "p5", "prompt_id": "q4", "tenet": "b", "score": 0.99},
    ]
    table = pa.Table.from_pylist(rows)
    for solver in ("ortools", "networkx"):
        r = assign_tenets(table, AssignConfig(capacity=2, solver=solver, scale=100))
        assert r.kept_tenets == ("a", "b")
        assert r.certificate.objective_levels == brute_force(table, 2, 0.5, 100)[1]
        assert sorted(r.assignment.column("pair_id").to_pylist()) == ["p2", "p3", "p4", "p5"]


@settings(max_examples=25, deadline=None)
@given(
    entries=hst.lists(
        hst.tuples(hst.integers(0, 6), hst.sampled_from("abc"), hst.integers(-10, 10)),
        min_size=1,
        max_size=12,
        unique_by=lambda e: (e[0], e[1]),
    ),
    prompts=hst.lists(hst.integers(0, 3), min_size=7, max_size=7),
    capacity=hst.integers(1, 3),
)
def test_random_tiny_networks_match_brute_force_and_certify(entries, prompts, capacity) -> None:
    rows = [
        {"pair_id": f"p{i}", "prompt_id": f"q{prompts[i]}", "tenet": t, "score": s / 10}
        for i, t, s in entries
    ]
    table = pa.Table.from_pylist(rows)
    st = encode_scores(table)
    arcs = best_arcs(st, 0.3, 10, 7, 2**8)
    net = build_network(arcs, np.arange(len(st.tenets)), capacity, 10, 2**8)
    for solver in ("ortools", "networkx"):
        sol = solve_network(net, solver)
        levels = int(arcs.level[sol.arc_flow == 1].sum())
        assert (sol.flow_value, levels) == brute_force(table, capacity, 0.3, 10)
        _, _, red = reduced_costs(net, sol.arc_flow, potentials(net, sol.arc_flow))
        assert (red >= 0).all()


def test_return_arc_exposes_a_flow_that_is_not_maximum() -> None:
    # The zero flow is the cheapest flow of value 0 and its residual graph (a DAG) has no cycle; only the
    # sink→source return arc of cost −B turns the missing augmenting path into a negative cycle.
    table = pa.Table.from_pylist([{"pair_id": "p1", "prompt_id": "q1", "tenet": "a", "score": 0.8}])
    st = encode_scores(table)
    arcs = best_arcs(st, 0.5, 100, 42, 2**4)
    net = build_network(arcs, np.arange(1), 1, 100, 2**4)
    with pytest.raises(NegativeCycleError):
        potentials(net, np.zeros(net.num_arcs, np.int8))
    best = solve_network(net, "ortools").arc_flow
    assert best.tolist() == [1]
    _, _, red = reduced_costs(net, best, potentials(net, best))
    assert red.min() == 0
