"""Maximum flow of minimum cost on a `Network`, with OR-Tools or networkx.

Both return the 0/1 flow on every tenet→prompt arc. Costs are −gain; the flow value is maximised
first and the cost minimised among maximum flows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from spl_hf.assign.network import Network


class SolverError(RuntimeError):
    """The solver did not report an optimal solution."""


@dataclass(frozen=True)
class FlowSolution:
    arc_flow: np.ndarray  # int8 per tenet→prompt arc
    flow_value: int
    cost: int  # Σ −gain over used arcs

    @classmethod
    def from_arc_flow(cls, net: Network, arc_flow: np.ndarray) -> FlowSolution:
        arc_flow = np.asarray(arc_flow, dtype=np.int8)
        return cls(arc_flow, int(arc_flow.sum()), -int(net.gain[arc_flow == 1].sum()))


def _arrays(net: Network) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    t, p = net.num_tenets, net.num_prompts
    sink = t + p + 1
    tails = np.concatenate([np.zeros(t, np.int32), 1 + net.arc_tenet, 1 + t + np.arange(p, dtype=np.int32)])
    heads = np.concatenate(
        [1 + np.arange(t, dtype=np.int32), 1 + t + net.arc_prompt, np.full(p, sink, np.int32)]
    )
    caps = np.concatenate(
        [np.full(t, net.capacity, np.int64), np.ones(net.num_arcs, np.int64), np.ones(p, np.int64)]
    )
    costs = np.concatenate([np.zeros(t, np.int64), -net.gain, np.zeros(p, np.int64)])
    return tails.astype(np.int32), heads.astype(np.int32), caps, costs


def solve_ortools(net: Network) -> FlowSolution:
    from ortools.graph.python import min_cost_flow

    smcf = min_cost_flow.SimpleMinCostFlow()
    tails, heads, caps, costs = _arrays(net)
    smcf.add_arcs_with_capacity_and_unit_cost(tails, heads, caps, costs)
    # solve_max_flow_with_min_cost sends as much of the supply as the network admits; offer an upper
    # bound of the flow value so that the maximum flow is what it finds.
    bound = min(net.num_tenets * net.capacity, net.num_prompts)
    smcf.set_node_supply(0, bound)
    smcf.set_node_supply(net.num_nodes - 1, -bound)
    status = smcf.solve_max_flow_with_min_cost()
    if status != smcf.OPTIMAL:
        raise SolverError(f"OR-Tools min cost flow returned {status.name}")
    first = net.num_tenets
    arc_flow = smcf.flows(np.arange(first, first + net.num_arcs, dtype=np.int32))
    if int(np.sum(arc_flow)) != smcf.maximum_flow():
        raise SolverError("OR-Tools flow on tenet→prompt arcs does not add up to its maximum flow")
    return FlowSolution.from_arc_flow(net, np.asarray(arc_flow))


def solve_networkx(net: Network) -> FlowSolution:
    import networkx as nx

    tails, heads, caps, costs = _arrays(net)
    graph = nx.DiGraph()
    graph.add_nodes_from(range(net.num_nodes))
    graph.add_edges_from(
        (int(u), int(v), {"capacity": int(c), "weight": int(w)})
        for u, v, c, w in zip(tails, heads, caps, costs, strict=True)
    )
    try:
        flow = nx.max_flow_min_cost(graph, 0, net.num_nodes - 1)
    except nx.NetworkXException as exc:
        raise SolverError(f"networkx min cost flow failed: {exc}") from exc
    first = net.num_tenets
    arc_flow = np.fromiter(
        (flow[int(tails[i])][int(heads[i])] for i in range(first, first + net.num_arcs)),
        dtype=np.int8,
        count=net.num_arcs,
    )
    return FlowSolution.from_arc_flow(net, arc_flow)


SOLVER_FUNCTIONS: dict[str, Callable[[Network], FlowSolution]] = {
    "ortools": solve_ortools,
    "networkx": solve_networkx,
}


def solve_network(net: Network, solver: str) -> FlowSolution:
    if net.num_arcs == 0:
        return FlowSolution(np.zeros(0, np.int8), 0, 0)
    return SOLVER_FUNCTIONS[solver](net)
