"""Residual graph of a 0/1 flow and node potentials that certify its optimality.

The "maximum flow, then minimum cost" problem is the minimum-cost circulation on the network plus a
return arc sink→source of cost −B with B = T·max_gain + 1: an augmenting path enters each tenet at
most once, so it gains at most T·max_gain, less than B, and a cheaper circulation must first carry
more flow. A flow is optimal for the original problem exactly when its residual graph (return arc
included) has no negative cycle, i.e. when potentials π exist with c(u,v) + π(u) − π(v) ≥ 0 on every
residual arc. The potentials here are shortest distances from a virtual root joined to every node by
a 0-cost arc. (When every kept tenet is saturated the flow value T·C already equals the capacity of
the source cut, so maximality is plain; the return arc keeps the certificate sound for any flow.)

OR-Tools' Python `SimpleMinCostFlow` exposes no node potentials and networkx's network simplex does
not return its duals, so both solvers share this computation from the final flow.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from spl_hf.assign.network import Network

_INF = np.int64(2**62)


class NegativeCycleError(RuntimeError):
    """The flow is not optimal: its residual graph has a negative cycle."""


@dataclass(frozen=True)
class FlowState:
    tenet_flow: np.ndarray  # int64 per local tenet
    prompt_used: np.ndarray  # bool per local prompt
    flow_value: int


def flow_state(net: Network, arc_flow: np.ndarray) -> FlowState:
    used = arc_flow == 1
    tenet_flow = np.bincount(net.arc_tenet[used], minlength=net.num_tenets).astype(np.int64)
    prompt_count = np.bincount(net.arc_prompt[used], minlength=net.num_prompts)
    return FlowState(tenet_flow, prompt_count > 0, int(used.sum()))


def residual_arcs(net: Network, arc_flow: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(tail, head, cost) of every residual arc, nodes numbered as in `Network`."""
    t, p = net.num_tenets, net.num_prompts
    src, sink = 0, t + p + 1
    st = flow_state(net, arc_flow)
    used = arc_flow == 1
    tnode, pnode = 1 + net.arc_tenet.astype(np.int64), 1 + t + net.arc_prompt.astype(np.int64)
    tenets, prompts = 1 + np.arange(t, dtype=np.int64), 1 + t + np.arange(p, dtype=np.int64)
    open_t = st.tenet_flow < net.capacity
    busy_t = st.tenet_flow > 0
    b = net.bounds.return_cost
    parts = [
        (np.where(used, pnode, tnode), np.where(used, tnode, pnode), np.where(used, net.gain, -net.gain)),
        (np.full(open_t.sum(), src), tenets[open_t], np.zeros(open_t.sum(), np.int64)),
        (tenets[busy_t], np.full(busy_t.sum(), src), np.zeros(busy_t.sum(), np.int64)),
        (
            prompts[~st.prompt_used],
            np.full((~st.prompt_used).sum(), sink),
            np.zeros((~st.prompt_used).sum(), np.int64),
        ),
        (
            np.full(st.prompt_used.sum(), sink),
            prompts[st.prompt_used],
            np.zeros(st.prompt_used.sum(), np.int64),
        ),
        (np.array([sink]), np.array([src]), np.array([-b], np.int64)),
    ]
    if st.flow_value > 0:
        parts.append((np.array([src]), np.array([sink]), np.array([b], np.int64)))
    tail = np.concatenate([x[0] for x in parts]).astype(np.int64)
    head = np.concatenate([x[1] for x in parts]).astype(np.int64)
    cost = np.concatenate([x[2] for x in parts]).astype(np.int64)
    return tail, head, cost


def potentials(net: Network, arc_flow: np.ndarray) -> np.ndarray:
    """Shortest residual distances (int64 per node), computed on the graph with prompts eliminated.

    Between two visits of {tenets, source, sink} a residual path crosses at most one prompt, so the
    distances follow from Bellman-Ford on T+2 nodes whose arc costs are minima over prompts
    (tenet→tenet via a prompt the second tenet holds, tenet→sink via a free prompt, sink→tenet via a
    prompt the tenet holds), followed by one pass over the arcs for the prompts' own distances.
    """
    t, p = net.num_tenets, net.num_prompts
    st = flow_state(net, arc_flow)
    used = arc_flow == 1
    holder = np.full(p, -1, np.int64)
    held_gain = np.zeros(p, np.int64)
    holder[net.arc_prompt[used]] = net.arc_tenet[used]
    held_gain[net.arc_prompt[used]] = net.gain[used]
    src, sink = t, t + 1  # condensed node ids; tenets are 0..t-1
    w = np.full((t + 2, t + 2), _INF, np.int64)
    free_arc = ~used
    via_held = free_arc & st.prompt_used[net.arc_prompt]
    ap = net.arc_prompt[via_held]
    np.minimum.at(w, (net.arc_tenet[via_held], holder[ap]), held_gain[ap] - net.gain[via_held])
    via_free = free_arc & ~st.prompt_used[net.arc_prompt]
    np.minimum.at(w[:, sink], net.arc_tenet[via_free], -net.gain[via_free])
    np.minimum.at(w[sink], holder[st.prompt_used], held_gain[st.prompt_used])
    w[src, :t][st.tenet_flow < net.capacity] = 0
    w[:t, src][st.tenet_flow > 0] = 0
    w[sink, src] = -net.bounds.return_cost
    if st.flow_value > 0:
        w[src, sink] = net.bounds.return_cost
    d = np.zeros(t + 2, np.int64)
    for _ in range(t + 3):
        nd = np.minimum(d, (d[:, None] + w).min(axis=0))
        if np.array_equal(nd, d):
            break
        d = nd
    else:
        raise NegativeCycleError("residual graph has a negative cycle: the flow is not optimal")
    dp = np.zeros(p, np.int64)
    np.minimum.at(dp, net.arc_prompt[free_arc], d[net.arc_tenet[free_arc]] - net.gain[free_arc])
    dp[st.prompt_used] = np.minimum(dp[st.prompt_used], d[sink])
    return np.concatenate([[d[src]], d[:t], dp, [d[sink]]]).astype(np.int64)


def reduced_costs(net: Network, arc_flow: np.ndarray, pi: np.ndarray) -> tuple[np.ndarray, ...]:
    tail, head, cost = residual_arcs(net, arc_flow)
    return tail, head, cost + pi[tail] - pi[head]
