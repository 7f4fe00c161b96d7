import json
import math
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from spl_hf.backends import ShardStore, judge_items, judge_outcome, run_worker
from spl_hf.backends.hf import BoundaryError
from spl_hf.backends.judge import PairwiseJudge, parse_pair, parse_pairs
from spl_hf.backends.settings import JudgeConfig
from spl_hf.cli import main as cli_main
from spl_hf.contract import score_from_probs
from spl_hf.tenets import select_tenets
from tests.backends_rows import pair_row, write_jsonl

TENETS = select_tenets(
    "no_preachy_tone,calibrated_caveats,upfront_concerns,harm_reduction_guidance,neutral_terminology"
)


def test_score_from_probs_is_the_order_averaged_difference() -> None:
    p1, p2 = 0.8, 0.3
    averaged = ((p1 - (1 - p1)) + ((1 - p2) - p2)) / 2
    assert math.isclose(score_from_probs(p1, p2), averaged)
    assert score_from_probs(p2, p1) == -score_from_probs(p1, p2)
    assert score_from_probs(0.82, 0.82) == 0.0  # pure first-slot preference cancels out
    with pytest.raises(ValueError, match="p_a_second"):
        score_from_probs(0.5, 1.5)


def test_prefix_shared_scores_equal_one_pass_scores(tiny_backend) -> None:
    judge = PairwiseJudge(tiny_backend)
    pair = parse_pair(pair_row(1), 0)
    fast = judge.judge_pair(pair, TENETS)  # chunk_size 3: two chunks, padded suffixes of unequal length
    slow = judge.judge_pair_naive(pair, TENETS)
    for f, s in zip(fast, slow, strict=True):
        assert abs(f.score - s.score) < 1e-4
        assert abs(f.p_a_first - s.p_a_first) < 1e-4 and abs(f.mass_second - s.mass_second) < 1e-6
        assert 0.0 < f.mass_first <= 1.0
    assert len({round(f.score, 9) for f in fast}) > 1  # different tenets really give different scores


def test_swapping_responses_negates_every_score(tiny_backend) -> None:
    judge = PairwiseJudge(tiny_backend)
    row = pair_row(2)
    swapped = {**row, "response_a": row["response_b"], "response_b": row["response_a"]}
    a = judge.judge_pair(parse_pair(row, 0), TENETS[:2])
    b = judge.judge_pair(parse_pair(swapped, 0), TENETS[:2])
    for x, y in zip(a, b, strict=True):
        assert x.score == -y.score
        assert (x.p_a_first, x.p_a_second) == (y.p_a_second, y.p_a_first)


def test_tokenization_boundary_is_checked(tiny_backend) -> None:
    with pytest.raises(BoundaryError, match="non-space"):
        tiny_backend.split_ids("hello\n\n", "world")
    p, s = tiny_backend.split_ids("hello", "\n\nworld")
    assert tiny_backend.encode("hello\n\nworld") == p + s
    # A suffix that would tokenize differently against the cache falls back to one full pass.
    before = tiny_backend.boundary_fallbacks
    got = tiny_backend.next_token_scores("Say", ["ing more", " hello there"], [("A", "B")] * 2)
    assert tiny_backend.boundary_fallbacks == before + 1
    for g, text in zip(got, ["Saying more", "Say hello there"], strict=True):
        ref = tiny_backend.next_token_scores_full(text, ("A", "B"))
        assert max(abs(x - y) for x, y in zip(g.probs, ref.probs, strict=True)) < 1e-6


def test_bad_rows_are_reported_with_reasons() -> None:
    rows = [
        pair_row(0),
        pair_row(1, prompt=[{"role": "tool", "content": "x"}]),
        pair_row(2, prompt=[{"role": "user", "content": 5}]),
        pair_row(3, response_b="   "),
        pair_row(4, pair_id=""),
        pair_row(0),
    ]
    good, bad = parse_pairs(rows)
    assert [p.pair_id for p in good] == ["p0"]
    reasons = [b.reason for b in bad]
    assert "prompt[0].role: 'tool' is not one of system, user, assistant" in reasons[0]
    assert "prompt[0].content: expected a string, got int" in reasons[1]
    assert "response_b: empty" in reasons[2]
    assert "pair_id" in reasons[3] and "duplicate" in reasons[4]
    assert [b.index for b in bad] == [1, 2, 3, 4, 5]


def _judge(judge, pairs, tenets, folder: Path, settings=None):
    store = ShardStore(str(folder))
    settings = {"min_label_mass": judge.min_label_mass} if settings is None else settings
    return run_worker(judge, judge_items(pairs, tenets), store, settings, progress=False)


def test_run_stores_shards_and_a_rerun_computes_nothing(tiny_backend, tmp_path: Path) -> None:
    judge = PairwiseJudge(tiny_backend, JudgeConfig(progress=False))
    pairs, _ = parse_pairs([pair_row(i) for i in range(3)])
    first = _judge(judge, pairs, TENETS, tmp_path / "r")
    assert (first.computed, first.cached) == (15, 0)
    rows = first.rows
    calls = tiny_backend.forward_calls
    again = _judge(judge, pairs, TENETS, tmp_path / "r")
    assert (again.computed, again.cached) == (0, 15)
    assert tiny_backend.forward_calls == calls
    assert again.rows == rows
    assert [(r["pair_id"], r["tenet"]) for r in rows[:2]] == [("p0", TENETS[0].name), ("p0", TENETS[1].name)]
    for r in rows:
        assert r["score"] == score_from_probs(r["p_a_first"], r["p_a_second"])
        assert r["chosen"] == ("a" if r["score"] > 0 else "b")


def test_over_long_pair_is_a_recorded_failure_not_a_crash(tiny_short_model_dir, tmp_path: Path) -> None:
    from spl_hf.backends.hf import HFBackend

    backend = HFBackend.load(str(tiny_short_model_dir))
    judge = PairwiseJudge(backend, JudgeConfig(progress=False))
    pairs, _ = parse_pairs([pair_row(0, prompt=[{"role": "user", "content": "word " * 400}]), pair_row(1)])
    rows, failures, _ = judge_outcome(_judge(judge, pairs, TENETS[:1], tmp_path / "r"), TENETS[:1])
    assert [f["pair_id"] for f in failures] == ["p0"]
    assert "longer than the model context (256)" in failures[0]["reason"]
    assert [r["pair_id"] for r in rows] == ["p1"]


def test_cli_judge_writes_assignable_scores(tiny_model_dir, tmp_path: Path, capsys) -> None:
    pairs = write_jsonl(
        tmp_path / "pairs.jsonl", [pair_row(i) for i in range(3)] + [pair_row(9, response_a=7)]
    )
    out = tmp_path / "scores.parquet"
    argv = [
        "judge",
        "--pairs",
        str(pairs),
        "--tenets",
        "no_preachy_tone,upfront_concerns",
        "--model",
        str(tiny_model_dir),
        "--cache",
        str(tmp_path / "results"),
        "--output_dir",
        str(out),
        "--json",
        "--no_progress",
    ]
    assert cli_main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    assert (summary["rows"], summary["computed"], summary["failed"]) == (6, 6, 1)
    assert "response_a: expected a string, got int" in summary["failures"][0]["reason"]
    assert (summary["not_judged"], summary["not_judged_by_tenet"], summary["boundary_fallbacks"]) == (
        0,
        {"no_preachy_tone": 0, "upfront_concerns": 0},
        0,
    )
    # Above every judgement's label mass: each of the 6 is not judged, counted once per tenet and listed.
    human = [
        *argv[:-2],
        "--no_progress",
        "--min_label_mass",
        "1.0",
        "--output_dir",
        str(tmp_path / "f.parquet"),
    ]
    assert cli_main(human) == 0
    out_text = capsys.readouterr().out
    assert "not_judged_by_tenet: no_preachy_tone 3, upfront_concerns 3" in out_text
    assert cli_main([*argv, "--min_label_mass", "1.0", "--output_dir", str(tmp_path / "g.parquet")]) == 0
    floor = json.loads(capsys.readouterr().out)
    assert (floor["rows"], floor["computed"], floor["failed"], floor["not_judged"]) == (0, 0, 1, 6)
    assert floor["not_judged_by_tenet"] == {"no_preachy_tone": 3, "upfront_concerns": 3}
    assert sum("not judged: label mass" in f["reason"] for f in floor["failures"]) == 6
    table = pq.read_table(out).to_pylist()
    assert {
        "pair_id",
        "prompt_id",
        "tenet",
        "score",
        "p_a_first",
        "p_a_second",
        "mass_first",
        "mass_second",
        "model_id",
        "model_revision",
        "template_hash",
    } <= set(table[0])
    assert table[0]["model_revision"].startswith("dir-sha256:")
    assert all(r["score"] == score_from_probs(r["p_a_first"], r["p_a_second"]) for r in table)
    assert Path(str(out) + ".failures.jsonl").is_file()
    assert cli_main([*argv[:-2], "--no_progress"]) == 2  # an existing output needs --overwrite
    assert (
        cli_main([*argv[:-2], "--no_progress", "--overwrite"]) == 0
    )  # rerun: all from the cache, same bytes
    assert pq.read_table(out).to_pylist() == table
    assert cli_main([*argv[:3], "--tenets", "not_a_tenet", *argv[5:], "--overwrite"]) == 2


def test_missing_ids_and_bad_row_id_are_recorded_not_invented() -> None:
    good = pair_row(0)
    rows = [
        {k: v for k, v in good.items() if k != "prompt_id"},
        {k: v for k, v in pair_row(1).items() if k != "source"},
        {**pair_row(2), "row_id": "n/a"},
        pair_row(3),
    ]
    pairs, bad = parse_pairs(rows)
    assert [p.pair_id for p in pairs] == [rows[3]["pair_id"]]
    assert [(b.index, b.reason.split(":")[0]) for b in bad] == [
        (0, "prompt_id"),
        (1, "source"),
        (2, "row_id"),
    ]


def test_judgements_below_min_label_mass_are_not_judged_and_counted_per_tenet(
    tiny_backend, tmp_path: Path, monkeypatch
) -> None:
    pairs, _ = parse_pairs([pair_row(i) for i in range(3)])
    tenets = select_tenets("no_preachy_tone,upfront_concerns")
    open_judge = PairwiseJudge(tiny_backend, JudgeConfig(progress=False))
    rows = _judge(open_judge, pairs, tenets, tmp_path / "r").rows
    assert len(rows) == 6
    masses = sorted(min(r["mass_first"], r["mass_second"]) for r in rows)
    floor = (masses[2] + masses[3]) / 2  # half of the judgements fall below it
    monkeypatch.setattr(tiny_backend, "min_label_mass", floor)
    strict = PairwiseJudge(tiny_backend, JudgeConfig(progress=False))
    result = _judge(strict, pairs, tenets, tmp_path / "r")
    kept, refused, not_judged = judge_outcome(result, tenets)
    assert result.computed == 6  # the floor is a setting of the stored rows: a changed one re-judges
    assert len(kept) == 3 and all(min(r["mass_first"], r["mass_second"]) >= floor for r in kept)
    assert refused == []  # not-judged is counted once, apart from the refused pairs
    assert not_judged.total == 3 and set(not_judged.by_tenet) == {t.name for t in tenets}
    assert len(not_judged.failures) == 3
    assert all(
        "not judged: label mass" in f.reason and "min_label_mass" in f.reason for f in not_judged.failures
    )
    assert {r["template_hash"] for r in kept} == {strict.template_hash}
    assert strict.template_hash != open_judge.template_hash  # the floor is recorded with the judge identity
