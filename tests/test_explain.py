"""`spl-hf explain`: one row's derivation from the release alone, checked against the release's files."""

from __future__ import annotations

import json
import math

import numpy as np
import pyarrow.compute as pc
import pyarrow.parquet as pq

from spl_hf.cli import main
from tests.audit_fixtures import copy_build, data_file, reseal, rewrite, tenet_files
from tests.hub_fixtures import TOKEN, client_env, run_cli


def _explain(capsys, *args) -> tuple[int, dict | str]:
    rc = main(["explain", *map(str, args)])
    out = capsys.readouterr().out
    return rc, (json.loads(out) if "--json" in args else out)


def _first_tenet_row(folder):
    path = tenet_files(folder)[0]
    return path, pq.read_table(path).slice(0, 1).to_pylist()[0]


def test_a_tenet_row_shows_the_numbers_its_files_hold_and_the_certificate_holds(built_tenets, capsys):
    _path, row = _first_tenet_row(built_tenets)
    rc, ex = _explain(capsys, built_tenets, row["scenario_id"], "--json")
    assert rc == 0 and ex["kind"] == "tenets" and ex["tenet"] == row["tenet"]
    judge = row["derivation"]["judge"]
    s = ex["score"]
    assert (s["p_a_first"], s["p_a_second"], s["mass_first"]) == (
        judge["p_a_first"],
        judge["p_a_second"],
        judge["mass_first"],
    )
    assert math.isclose(s["recomputed"], judge["p_a_first"] - judge["p_a_second"]) and s["matches"]
    assert math.isclose(abs(s["recomputed"]), row["score"])
    assert s["eligible"] and s["threshold"] == 0.3 and s["side_from_sign"] == ex["chosen_side"]
    # The pair's scores on every tenet, exactly as judge_scores holds them.
    scores = pq.read_table(data_file(built_tenets, "judge_scores"))
    mine = scores.filter(pc.equal(scores["pair_id"], row["derivation"]["pair_id"]))
    assert {o["tenet"]: o["score"] for o in ex["other_tenets"]} == dict(
        zip(mine["tenet"].to_pylist(), mine["score"].to_pylist())
    )
    a = ex["assignment"]
    assert a["assigned_arc"]["tenet"] == row["tenet"] and a["all_reduced_costs_nonnegative"]
    assert all(alt["reduced_cost"] >= 0 and alt["net_change"] <= 0 for alt in a["alternatives"])
    assert ex["audit"]["row_reproduced"] is True and ex["audit"]["release_ok"]
    # Each probability named by what it is: the stored ones are P(the response shown first is better).
    p1, p2 = judge["p_a_first"], judge["p_a_second"]
    assert (s["p_a_better_a_first"], s["p_a_better_b_first"], s["p_b_better_b_first"]) == (p1, 1 - p2, p2)
    assert s["position"] == position_counts_class(p1, p2)
    assert s["position_inconsistent"] == (s["position"] in ("first_slot", "second_slot"))
    assert {o["tenet"]: o["position"] for o in ex["other_tenets"]} == {
        t: position_counts_class(a, b)
        for t, a, b in zip(
            mine["tenet"].to_pylist(), mine["p_a_first"].to_pylist(), mine["p_a_second"].to_pylist()
        )
    }
    # The text names the same numbers, and a move to every alternative tenet in words.
    rc, text = _explain(capsys, built_tenets, row["scenario_id"])
    assert rc == 0 and f"{judge['p_a_first']:.6f}" in text and "reduced costs all >= 0" in text
    assert f"P(A better | A first) = p_a_first      = {p1:.6f}" in text
    assert f"P(A better | B first) = 1 − p_a_second = {1 - p2:.6f}" in text and "P(A) with" not in text
    assert f"P(B better | B first) = {p2:.6f}" in text
    for alt in a["alternatives"]:
        assert f"moving this prompt to {alt['tenet']} would " in text


def position_counts_class(p1: float, p2: float) -> str:
    """The class ``contract.quality.position_counts`` counts this judgement in ("undecided": none)."""
    from spl_hf.contract.quality import position_counts

    c = position_counts(np.array([p1]), np.array([p2]))
    return next((k for k in ("consistent", "first_slot", "second_slot") if getattr(c, k)), "undecided")


def test_the_orderings_are_named_and_classed_as_the_card_counts_them():
    from spl_hf.contract.orderings import name_orderings, positions

    rng = np.random.default_rng(3)
    p1 = np.concatenate([rng.random(200), [0.5, 0.7, 0.2, 0.5]])
    p2 = np.concatenate([rng.random(200), [0.9, 0.5, 0.1, 0.5]])
    got = positions(p1, p2)
    assert got == [name_orderings(a, b).position for a, b in zip(p1, p2)]
    assert got == [position_counts_class(a, b) for a, b in zip(p1, p2)]
    assert {"consistent", "first_slot", "second_slot", "undecided"} <= set(got)
    # The review's judgement: "P(A) 0.72 with A first, 0.67 with B first" was the first slot twice.
    o = name_orderings(0.720546, 0.665334)
    assert o.position == "first_slot" and o.position_inconsistent
    assert math.isclose(o.p_a_better_b_first, 0.334666) and o.p_b_better_b_first == 0.665334


def test_config_split_index_finds_the_same_row_as_its_id(built_tenets, capsys):
    path, row = _first_tenet_row(built_tenets)
    config, split = path.parent.name, path.name.split("-")[0]
    _, by_index = _explain(capsys, built_tenets, config, split, 0, "--json", "--no_audit")
    _, by_id = _explain(capsys, built_tenets, row["scenario_id"], "--json", "--no_audit")
    assert by_index["scenario_id"] == by_id["scenario_id"] == row["scenario_id"]
    assert "audit" not in by_index and by_index["score"] == by_id["score"]


def test_a_tampered_row_is_named_by_explain_and_by_the_audit_text(built_tenets, tmp_path, capsys):
    folder = copy_build(built_tenets, tmp_path / "t")
    path, row = _first_tenet_row(folder)

    def edit(rows):
        rows[0]["score"] += 0.125

    rewrite(path, edit)
    reseal(folder)
    rc, ex = _explain(capsys, folder, row["scenario_id"], "--json")
    assert rc == 0 and not ex["score"]["matches"]
    assert ex["audit"]["row_reproduced"] is False and not ex["audit"]["release_ok"]
    assert any("score" in m["fields"] for m in ex["audit"]["row_mismatches"])
    assert main(["audit", str(folder)]) == 1
    out = capsys.readouterr().out
    assert f"({row['scenario_id']}): " in out and "mismatch:" in out


def test_an_spl_row_shows_its_rules_verdicts_and_label(built_spl, capsys):
    table = pq.read_table(data_file(built_spl, "derivations", "xstest"))
    rows = table.to_pylist()
    labeled = next(r for r in rows if r["derivation"]["label"])
    unlabeled = next(r for r in rows if not r["derivation"]["label"])
    rc, ex = _explain(capsys, built_spl, labeled["pair_id"], "--json")
    der = labeled["derivation"]
    assert rc == 0 and ex["kind"] == "spl" and ex["label"] == der["label"]
    assert [r["id"] for r in ex["a"]["rules"]] == der["rules_a"] and ex["b"]["verdict"] == der["verdict_b"]
    assert all(r["when"] for r in ex["a"]["rules"]) and ex["a"]["rank"] == der["rank_a"]
    assert ex["verdict_ranks"][der["verdict_a"]] == der["rank_a"]
    assert ex["a"]["attributes"] == labeled["response_a_attributes"]
    assert ex["a"]["labeler"]["identity"] == "recorded, producer not recorded"
    assert ex["audit"]["row_reproduced"] is True
    rc, ex = _explain(capsys, built_spl, unlabeled["pair_id"], "--json", "--no_audit")
    assert ex["label"] is None and ex["no_label_reason"] == unlabeled["derivation"]["no_label_reason"]


def test_unknown_rows_and_paths_are_clear_errors(built_spl, capsys):
    assert main(["explain", str(built_spl), "no_such_pair"]) == 2
    assert "no row with pair_id 'no_such_pair'" in capsys.readouterr().err
    assert main(["explain", str(built_spl), "derivations", "xstest", "999"]) == 2
    assert "no row 999" in capsys.readouterr().err
    assert main(["explain", str(built_spl), "derivations", "nope", "0"]) == 2
    assert "no split 'nope'" in capsys.readouterr().err


def test_a_hub_release_is_explained_at_a_revision(builds, hub, tmp_path):
    env = client_env(hub, tmp_path / "home")
    pub = run_cli(["publish", str(builds["tenets"]), "--repo_id", "org/explained"], env)
    assert pub.returncode == 0, pub.stderr[-2000:]
    _path, row = _first_tenet_row(builds["tenets"])
    res = run_cli(["explain", "org/explained", row["scenario_id"], "--revision", "main", "--json"], env)
    assert res.returncode == 0, res.stderr[-3000:]
    ex = json.loads(res.stdout)
    assert ex["release"] == "org/explained@main" and ex["audit"]["row_reproduced"] is True
    assert ex["score"]["stored"] == row["score"] and TOKEN not in res.stdout + res.stderr


def test_an_spl_row_with_a_verdict_judge_shows_its_probabilities(built_spl_judge, capsys):
    path = next(p for p in sorted((built_spl_judge / "judge_derivations").glob("*.parquet")))
    row = pq.read_table(path).slice(0, 1).to_pylist()[0]
    rc, ex = _explain(capsys, built_spl_judge, row["pair_id"], "--json", "--no_audit")
    assert rc == 0 and ex["judge"]["verdict_a"] == row["judge"]["verdict_a"]
    rc, text = _explain(capsys, built_spl_judge, row["pair_id"], "--no_audit")
    assert f"A: {row['judge']['verdict_a']} rank {row['judge']['rank_a']}" in text
