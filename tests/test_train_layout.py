"""The sweep layout: what train/sweep.py writes is what every reader reads, and Table XIV is one table."""

import json

import pytest

from spl_hf.evaluation import at_limit_table, collect_metrics
from spl_hf.report import load_runs, seed_report
from spl_hf.train.layout import seed_of
from spl_hf.train.sweep import Condition, plan
from tests.report_fixtures import metrics, write_runs


def test_the_readers_find_the_folders_the_sweep_writes(tmp_path):
    runs = plan("r.yaml", [3, 11], [Condition("judge", "tenets")], tmp_path)
    for run in runs:
        d = run.out / "eval" / "or_bench_toxic"
        d.mkdir(parents=True)
        (d / "metrics.json").write_text(json.dumps(metrics("or_bench_toxic", run.seed, 500, 100)))
    assert [seed_of(r.out.name) for r in runs] == [3, 11]
    assert sorted((m.condition, m.seed) for m in load_runs(tmp_path)) == [("judge", 3), ("judge", 11)]
    assert sorted((m["condition"], m["seed"]) for m in collect_metrics(tmp_path)) == [
        ("judge", 3),
        ("judge", 11),
    ]


def test_a_folder_the_sweep_never_writes_is_no_seed_for_any_reader(tmp_path):
    d = tmp_path / "judge" / "seed_3" / "eval" / "or_bench_toxic"
    d.mkdir(parents=True)
    (d / "metrics.json").write_text(json.dumps(metrics("or_bench_toxic", 3, 500, 100)))
    with pytest.raises(ValueError, match="needs seed<k> subfolders"):
        load_runs(tmp_path)
    with pytest.raises(ValueError, match="no <condition>/seed<k>/"):
        collect_metrics(tmp_path)


def test_report_seeds_and_eval_at_limit_pool_table_xiv_alike(tmp_path):
    write_runs(tmp_path)
    report = seed_report(load_runs(tmp_path))
    from_report = {(c, ps): (n, k) for c, ps, n, k in report.pooled_at_limit()}
    from_eval = {
        (r["condition"], r["prompt_set"]): (r["n"], r["at_limit"])
        for r in at_limit_table(tmp_path)
        if r["seed"] == "all"
    }
    assert from_report == from_eval
    assert from_eval[("prompt_shared", "or_bench_hard_1k")] == (5 * 1319, 927 + 925 + 924 + 926 + 920)
