"""The certificate verifies a solver's answer and rejects tampered assignments or potentials."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from spl_hf.assign import (
    AssignConfig,
    AssignmentResult,
    Certificate,
    DroppedTenet,
    assign_tenets,
    verify_assignment,
    verify_certificate,
)
from spl_hf.assign.synthetic import card_capacity, card_shaped_scores

N = 1500


@pytest.fixture(scope="module")
def solved() -> tuple[pa.Table, AssignmentResult]:
    table = card_shaped_scores(N, seed=11)
    return table, assign_tenets(table, AssignConfig(capacity=card_capacity(N)))


def replace_row(assignment: pa.Table, i: int, row: dict) -> pa.Table:
    rows = assignment.to_pylist()
    rows[i] = {k: row[k] for k in assignment.column_names}
    return pa.Table.from_pylist(rows, schema=assignment.schema)


def test_certificate_verifies_and_survives_json(solved) -> None:
    table, r = solved
    check = verify_certificate(table, r)
    assert check.ok, check.failures
    assert check.residual_arcs > r.assignment.num_rows and check.min_reduced_cost == 0
    back = Certificate.from_dict(json.loads(json.dumps(r.certificate.to_dict())))
    assert back == r.certificate
    assert verify_assignment(table, r.assignment, back).ok


def test_swapping_in_an_unassigned_pair_fails(solved) -> None:
    table, r = solved
    used_prompts = set(r.assignment.column("prompt_id").to_pylist())
    kept = set(r.kept_tenets)
    first = r.assignment.slice(0, 1).to_pylist()[0]
    # An eligible pair on a free prompt, for the same tenet: same counts, lower or equal... but not optimal.
    candidates = [
        row
        for row in table.to_pylist()
        if row["tenet"] == first["tenet"]
        and abs(row["score"]) >= 0.5
        and row["prompt_id"] not in used_prompts
    ]
    assert candidates and first["tenet"] in kept
    check = verify_assignment(table, replace_row(r.assignment, 0, candidates[0]), r.certificate)
    assert not check.ok
    assert any("reduced cost" in f or "objective" in f for f in check.failures)


def test_swapping_in_a_worse_pair_of_the_same_prompt_fails() -> None:
    table = pa.Table.from_pylist(
        [
            {"pair_id": "x1", "prompt_id": "q", "tenet": "a", "score": 0.9},
            {"pair_id": "x2", "prompt_id": "q", "tenet": "a", "score": 0.7},
            {"pair_id": "y", "prompt_id": "r", "tenet": "a", "score": -0.6},
        ]
    )
    r = assign_tenets(table, AssignConfig(capacity=2))
    assert sorted(r.assignment.column("pair_id").to_pylist()) == ["x1", "y"]
    i = r.assignment.column("pair_id").to_pylist().index("x1")
    tampered = replace_row(r.assignment, i, {"pair_id": "x2", "prompt_id": "q", "tenet": "a", "score": 0.7})
    check = verify_assignment(table, tampered, r.certificate)
    assert not check.ok and "best pair" in check.failures[0]


def test_changing_a_tenet_fails(solved) -> None:
    table, r = solved
    kept = r.kept_tenets
    row = r.assignment.slice(0, 1).to_pylist()[0]
    other = next(t for t in kept if t != row["tenet"])
    check = verify_assignment(table, replace_row(r.assignment, 0, {**row, "tenet": other}), r.certificate)
    assert not check.ok


def test_moving_a_pair_to_another_tenet_it_is_eligible_for_fails(solved) -> None:
    table, r = solved
    scored = {(x["pair_id"], x["tenet"]): x["score"] for x in table.to_pylist()}
    rows = r.assignment.to_pylist()
    # Exchange the tenets of two assigned pairs that are each eligible for the other's tenet:
    # counts, pairs and prompts are unchanged, so only the optimality check can object.
    for i, a in enumerate(rows):
        for j in range(i + 1, len(rows)):
            b = rows[j]
            sa, sb = scored.get((a["pair_id"], b["tenet"])), scored.get((b["pair_id"], a["tenet"]))
            if (
                a["tenet"] != b["tenet"]
                and sa is not None
                and sb is not None
                and min(abs(sa), abs(sb)) >= 0.5
            ):
                rows[i] = {**a, "tenet": b["tenet"], "score": sa}
                rows[j] = {**b, "tenet": a["tenet"], "score": sb}
                tampered = pa.Table.from_pylist(rows, schema=r.assignment.schema)
                check = verify_assignment(table, tampered, r.certificate)
                assert not check.ok
                assert any("reduced cost" in f or "best pair" in f for f in check.failures)
                return
    pytest.fail("no exchangeable pairs in the instance")


@pytest.mark.parametrize(
    "change",
    [
        {"potential_source": 1},
        {"potential_sink": -1},
        {"tenet_potentials": 10**6},
        {"prompt_potentials": 10**12},
        {"objective": 1e-6},
        {"objective_levels": 1},
    ],
)
def test_altered_certificate_fields_fail(solved, change: dict) -> None:
    table, r = solved
    (field, delta), c = next(iter(change.items())), r.certificate
    value = getattr(c, field)
    value = (value[0] + delta, *value[1:]) if isinstance(value, tuple) else value + delta
    check = verify_assignment(table, r.assignment, dataclasses.replace(c, **{field: value}))
    assert not check.ok


def test_removed_or_duplicated_rows_fail(solved) -> None:
    table, r = solved
    assert not verify_assignment(table, r.assignment.slice(1), r.certificate).ok
    doubled = pa.concat_tables([r.assignment, r.assignment.slice(0, 1)])
    check = verify_assignment(table, doubled, r.certificate)
    assert not check.ok and any("repeat a pair_id" in f for f in check.failures)


def test_false_drop_reason_fails(solved) -> None:
    table, r = solved
    c = r.certificate
    # Claim that a kept tenet was dropped for a small pool, removing its rows: its pool is not small.
    moved = c.kept_tenets[0]
    eligible = table.filter(
        pc.and_(pc.equal(table["tenet"], moved), pc.greater_equal(pc.abs(table["score"]), 0.5))
    )
    pool = len(set(eligible.column("prompt_id").to_pylist()))
    fake = dataclasses.replace(
        c,
        kept_tenets=c.kept_tenets[1:],
        tenet_potentials=c.tenet_potentials[1:],
        dropped_tenets=(*c.dropped_tenets, DroppedTenet(moved, "pool_below_capacity", pool)),
    )
    rest = r.assignment.filter(pc.not_equal(r.assignment["tenet"], moved))
    check = verify_assignment(table, rest, fake)
    assert not check.ok and any("not below capacity" in f for f in check.failures)


def test_changed_score_in_the_table_fails(solved) -> None:
    table, r = solved
    row = r.assignment.slice(0, 1).to_pylist()[0]
    scores = np.array(table.column("score").to_pylist())
    hit = np.flatnonzero(
        (np.array(table.column("pair_id").to_pylist()) == row["pair_id"])
        & (np.array(table.column("tenet").to_pylist()) == row["tenet"])
    )
    scores[hit] = np.sign(scores[hit]) * 0.5
    edited = table.set_column(3, "score", pa.array(scores))
    assert not verify_certificate(edited, r).ok


def test_an_unsaturated_drop_must_match_a_recorded_solve():
    from dataclasses import replace

    import pyarrow as pa
    import pyarrow.compute as pc

    from spl_hf.assign import AssignConfig, DroppedTenet, assign_tenets, verify_assignment

    rows = [
        {"pair_id": f"p{base + i}", "prompt_id": f"q{base + i}", "tenet": t, "score": 0.9 - 0.1 * i}
        for t, base in (("t_a", 0), ("t_b", 10))
        for i in range(3)
    ]
    full = pa.Table.from_pylist(rows)
    cfg = AssignConfig(capacity=2, threshold=0.5)
    assert assign_tenets(full, cfg).kept_tenets == ("t_a", "t_b")
    # Solve t_a alone, then claim t_b (which fills) was dropped as unsaturated.
    only_a = assign_tenets(full.filter(pc.equal(full["tenet"], "t_a")), cfg)
    forged = replace(only_a.certificate, dropped_tenets=(DroppedTenet("t_b", "unsaturated", 3, 0, 0),))
    check = verify_assignment(full, only_a.assignment, forged)
    assert not check.ok
    assert any("does not record dropping it" in f for f in check.failures)


def test_a_recorded_assignment_is_what_the_given_one_is_without_a_second_check(solved) -> None:
    """recorded_assignment (a release's write stage) gives the result given_assignment gives after its
    check, from the solve's own statistics; statistics that are missing or not a mapping are refused."""
    from spl_hf.assign import GIVEN_STATS, given_assignment, recorded_assignment
    from spl_hf.errors import SplHfError

    table, r = solved
    given = given_assignment(table, r.assignment, r.certificate)
    recorded = recorded_assignment(r.assignment, r.certificate, dict(r.stats))
    assert recorded.assignment.equals(given.assignment) and recorded.config == given.config
    assert recorded.stats == given.stats == {k: r.stats[k] for k in GIVEN_STATS}
    assert recorded.summary() == given.summary()
    with pytest.raises(SplHfError, match="lack"):
        recorded_assignment(r.assignment, r.certificate, {"rows": r.stats["rows"]}, "stats.json")
    with pytest.raises(SplHfError, match="not a JSON object"):
        recorded_assignment(r.assignment, r.certificate, [1, 2], "stats.json")  # type: ignore[arg-type]
