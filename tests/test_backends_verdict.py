import json
from pathlib import Path

import pytest

from spl_hf.backends import ShardStore, run_worker
from spl_hf.backends.labeler import items_from_rows
from spl_hf.backends.verdict import VerdictJudge, verdict_preference
from spl_hf.rules import default_rulebase
from tests.backends_rows import pair_row, write_jsonl

RANKS = default_rulebase().verdicts


def test_verdict_preference_follows_the_rule_base_ranking() -> None:
    assert verdict_preference("helpful_compliance", "harmful_compliance", RANKS).chosen == "a"
    assert verdict_preference("unjustified_refusal", "justified_refusal", RANKS).chosen == "b"
    tie = verdict_preference("partial_compliance", "partial_compliance", RANKS)
    assert tie.chosen is None and "equal verdict rank" in tie.reason
    with pytest.raises(KeyError, match="not in the ranking"):
        verdict_preference("great", "partial_compliance", RANKS)


def test_verdict_judge_picks_one_verdict_with_stored_probabilities(tiny_backend, tmp_path: Path) -> None:
    judge = VerdictJudge(tiny_backend, progress=False)
    assert judge.verdicts[0] == "helpful_compliance" and judge.verdicts[-1] == "harmful_compliance"
    rows = [pair_row(0), pair_row(1)]
    items, _ = items_from_rows(rows)
    responses = [it for it in items if it.scope == "response"]  # verdicts need a response
    result = run_worker(judge, responses, ShardStore(str(tmp_path / "r")), {}, progress=False)
    out = result.rows
    assert result.computed == 4 and len(out) == 4
    for r in out:
        probs = json.loads(r["probs_json"])
        assert set(probs) == set(RANKS) and abs(sum(probs.values()) - 1) < 1e-9
        assert r["verdict"] == max(probs, key=probs.get) and r["rank"] == RANKS[r["verdict"]]
    labels = judge.pair_labels(rows, out)
    by_pair = {r["response_id"]: r["rank"] for r in out}
    for lab in labels:
        ra, rb = by_pair[f"{lab['pair_id']}/a"], by_pair[f"{lab['pair_id']}/b"]
        assert lab["chosen"] == ("a" if ra > rb else "b" if rb > ra else None)
        assert (lab["no_label_reason"] is None) == (ra != rb)


def test_cli_verdict_task_writes_pair_labels(tiny_model_dir: Path, tmp_path: Path, capsys) -> None:
    from spl_hf.cli import main as cli_main

    items = write_jsonl(tmp_path / "pairs.jsonl", [pair_row(0), pair_row(1)])
    assert (
        cli_main(
            [
                "label",
                "--task",
                "verdict",
                "--items",
                str(items),
                "--model",
                str(tiny_model_dir),
                "--cache",
                str(tmp_path / "results"),
                "--output_dir",
                str(tmp_path / "v.jsonl"),
                "--pair_labels",
                str(tmp_path / "pl.jsonl"),
                "--json",
                "--no_progress",
            ]
        )
        == 0
    )
    summary = json.loads(capsys.readouterr().out)
    assert (summary["rows"], summary["pair_labels"]) == (4, 2)
    assert len((tmp_path / "pl.jsonl").read_text().splitlines()) == 2


def test_label_task_verdict_output_feeds_the_spl_build_and_its_audit(
    tiny_model_dir: Path, tmp_path: Path, capsys
) -> None:
    from spl_hf.build.spl import _sample
    from spl_hf.cli import main as cli_main
    from spl_hf.derive.pairs import read_jsonl

    prompts = {p["prompt_id"]: p["prompt"] for p in read_jsonl(_sample("spl_prompts.jsonl"))}
    cands = read_jsonl(_sample("spl_candidates.jsonl"))[
        :12
    ]  # a few prompts' candidates: the rest get no record
    items = write_jsonl(
        tmp_path / "cands.jsonl",
        [
            {
                "prompt_id": c["prompt_id"],
                "prompt": [{"role": "user", "content": prompts[c["prompt_id"]]}],
                "response": c["response"],
                "response_id": c["candidate_id"],
            }
            for c in cands
        ],
    )
    verdicts = tmp_path / "verdicts.jsonl"
    assert (
        cli_main(
            [
                "label",
                "--task",
                "verdict",
                "--items",
                str(items),
                "--model",
                str(tiny_model_dir),
                "--cache",
                str(tmp_path / "results"),
                "--output_dir",
                str(verdicts),
                "--no_progress",
            ]
        )
        == 0
    )
    out = tmp_path / "ds"
    assert cli_main(["derive", "--verdicts", str(verdicts), "--output_dir", str(out)]) == 0
    report = json.loads((out / "build_report.json").read_text())["judge"]
    assert (
        report["records"] == 12
        and report["candidates_without_record"] == len(read_jsonl(_sample("spl_candidates.jsonl"))) - 12
    )
    assert report["model_id"] and report["template_hash"]
    capsys.readouterr()
    assert cli_main(["audit", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["judge"]["mismatch_count"] == 0


def test_verdicts_below_min_label_mass_give_no_verdict_row_and_no_pair_label(
    tiny_backend, tmp_path: Path, monkeypatch
) -> None:
    rows = [pair_row(0)]
    items, _ = items_from_rows(rows)
    monkeypatch.setattr(tiny_backend, "min_label_mass", 1.0)
    judge = VerdictJudge(tiny_backend, progress=False)
    responses = [it for it in items if it.scope == "response"]
    store = ShardStore(str(tmp_path / "r"))
    first = run_worker(judge, responses, store, {}, progress=False)
    again = run_worker(judge, responses, store, {}, progress=False)
    verdicts = again.rows
    assert first.computed == 2 and again.computed == 0 and len(again.not_judged) == 2
    assert verdicts == []
    assert all("not judged: label mass" in f["reason"] for f in first.not_judged)
    (label,) = judge.pair_labels(rows, verdicts)
    assert label["chosen"] is None and label["no_label_reason"] == "a response has no verdict"
