"""The default saturation strategy against the one-at-a-time reference when prompts are scarce."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spl_hf.assign import DEFAULT_STRATEGY, AssignConfig, assign_tenets, verify_certificate
from spl_hf.assign.synthetic import card_capacity, card_shaped_scores


def tenet_counts(table: pa.Table) -> dict[str, int]:
    names, counts = np.unique(np.array(table.column("tenet").to_pylist()), return_counts=True)
    return dict(zip(names.tolist(), counts.tolist(), strict=True))


@st.composite
def scarce_instances(draw) -> tuple[pa.Table, int]:
    """Few prompts shared by several tenets, so that tenets compete and re-solves matter."""
    num_prompts = draw(st.integers(2, 10))
    num_tenets = draw(st.integers(2, 6))
    capacity = draw(st.integers(1, 3))
    rows = []
    for p in range(num_prompts):
        for k in range(draw(st.integers(1, 2))):  # pairs of the prompt
            for t in range(num_tenets):
                if draw(st.booleans()):
                    score = draw(st.sampled_from([0.5, 0.6, 0.75, 0.9, 1.0, -0.55, -0.8, 0.2]))
                    rows.append(
                        {"pair_id": f"p{p}_{k}", "prompt_id": f"q{p}", "tenet": f"t{t}", "score": score}
                    )
    if not rows:
        rows.append({"pair_id": "p0_0", "prompt_id": "q0", "tenet": "t0", "score": 0.9})
    return pa.Table.from_pylist(rows), capacity


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scarce_instances())
def test_default_keeps_at_least_as_many_tenets_as_one_at_a_time(instance) -> None:
    table, capacity = instance
    default = assign_tenets(table, AssignConfig(capacity=capacity, solver="networkx"))
    reference = assign_tenets(
        table, AssignConfig(capacity=capacity, solver="networkx", strategy="prefilter+one-at-a-time")
    )
    assert default.certificate.strategy == DEFAULT_STRATEGY == "prefilter+bounded"
    assert len(default.kept_tenets) >= len(reference.kept_tenets)
    assert len(default.certificate.solves) <= len(reference.certificate.solves)
    assert tenet_counts(default.assignment) == dict.fromkeys(default.kept_tenets, capacity)
    assert verify_certificate(table, default).ok


def test_scarce_card_shaped_instance_keeps_what_one_at_a_time_keeps() -> None:
    # The instance shape: card-shaped pairs with twice the card's capacity. Dropping every
    # unsaturated tenet at once empties the release; the default keeps what one-at-a-time keeps.
    table = card_shaped_scores(3000, seed=0)
    cap = 2 * card_capacity(3000)
    kept = {
        s: assign_tenets(table, AssignConfig(capacity=cap, strategy=s))
        for s in ("prefilter+bounded", "prefilter+one-at-a-time", "prefilter+iterate")
    }
    n = {s: len(r.kept_tenets) for s, r in kept.items()}
    assert n["prefilter+iterate"] < n["prefilter+one-at-a-time"] <= n["prefilter+bounded"]
    best = kept["prefilter+bounded"]
    assert tenet_counts(best.assignment) == dict.fromkeys(best.kept_tenets, cap)
    assert verify_certificate(table, best).ok


def test_card_settings_keep_49_tenets_in_one_solve() -> None:
    table = card_shaped_scores(3000, seed=3)
    r = assign_tenets(table, AssignConfig(capacity=card_capacity(3000)))
    assert len(r.kept_tenets) == 49 and len(r.certificate.solves) == 1
    assert r.summary()["strategy"] == "prefilter+bounded"


def test_batch_drop_when_the_saturated_tenets_reach_the_flow_bound() -> None:
    # Capacity 3, five prompts. a owns qa1..qa3; c and d compete for x and y and each has one of a's
    # prompts, which a prefers. First solve: a 3, c 1, d 1; maximum flow 5 and floor(5/3) = 1 = the
    # saturated count, so no subset keeps more than a alone: c and d go together (2 solves), where
    # one-at-a-time needs a third solve to reach the same result.
    rows = [
        ("pa1", "qa1", "a", 0.9),
        ("pa2", "qa2", "a", 0.9),
        ("pa3", "qa3", "a", 0.9),
        ("px", "x", "c", 0.8),
        ("py", "y", "c", 0.6),
        ("pa1", "qa1", "c", 0.5),
        ("px", "x", "d", 0.6),
        ("py", "y", "d", 0.8),
        ("pa2", "qa2", "d", 0.5),
    ]
    table = pa.Table.from_pylist([dict(zip(("pair_id", "prompt_id", "tenet", "score"), r)) for r in rows])
    r = assign_tenets(table, AssignConfig(capacity=3))
    ref = assign_tenets(table, AssignConfig(capacity=3, strategy="prefilter+one-at-a-time"))
    assert r.kept_tenets == ref.kept_tenets == ("a",)
    first = r.certificate.solves[0]
    assert first.flow_value == 5 and first.unsaturated == 2 and first.dropped == ("c", "d")
    assert len(r.certificate.solves) == 2 and len(ref.certificate.solves) == 3
    assert r.assignment.equals(ref.assignment)
