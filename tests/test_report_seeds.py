import json
import sys

import numpy as np
import pytest
from scipy import stats

from spl_hf.cli import main
from spl_hf.report import load_runs, parse_contrast, seed_report
from tests import procs
from tests.report_fixtures import COUNTS, N, metrics, write_runs

HARD = "or_bench_hard_1k"


def rates(cond, ps=HARD):
    return [100 * COUNTS[cond][s][ps][0] / N[ps] for s in sorted(COUNTS[cond])]


@pytest.fixture
def runs(tmp_path):
    return write_runs(tmp_path / "runs")


def test_load_runs_reads_every_metrics_file(runs):
    rs = load_runs(runs)
    assert len(rs) == 2 * 5 * 2
    r = next(r for r in rs if (r.condition, r.seed, r.prompt_set) == ("judge", 3, HARD))
    assert (r.n, r.n_refusals, r.at_limit, r.matcher) == (1319, 609, 873, "xstest")


def test_summaries_and_contrast_match_scipy(runs):
    rep = seed_report(load_runs(runs), [("prompt_shared", "judge")])
    s = next(x for x in rep.summaries if x.condition == "prompt_shared" and x.prompt_set == HARD)
    x = rates("prompt_shared")
    assert s.rates == pytest.approx(x)
    assert s.summary.mean == pytest.approx(np.mean(x)) and s.summary.sd == pytest.approx(np.std(x, ddof=1))
    assert (s.summary.ci_low, s.summary.ci_high) == pytest.approx(
        stats.ttest_1samp(x, 0).confidence_interval()
    )
    assert s.summary.df == 4 and s.summary.t_critical == pytest.approx(2.776, abs=5e-4)
    c = next(c for c in rep.contrasts if c.prompt_set == HARD)
    y = rates("judge")
    assert c.contrast.differences == pytest.approx([a - b for a, b in zip(x, y)])
    lo, hi = stats.ttest_rel(x, y).confidence_interval()
    assert (c.contrast.summary.ci_low, c.contrast.summary.ci_high) == pytest.approx((lo, hi))
    assert c.at_limit_first == (927, 925, 924, 926, 920) and c.at_limit_second == (876, 871, 873, 867, 870)


def test_default_contrasts_cover_every_pair_in_name_order(runs):
    rep = seed_report(load_runs(runs))
    assert [(c.prompt_set, c.contrast.first, c.contrast.second) for c in rep.contrasts] == [
        (HARD, "judge", "prompt_shared"),
        ("or_bench_toxic", "judge", "prompt_shared"),
    ]


def test_markdown_tables(runs):
    md = seed_report(load_runs(runs), [("prompt_shared", "judge")]).to_markdown()
    assert "matchers: or_bench_hard_1k: xstest" in md
    assert "| or_bench_hard_1k | prompt_shared | 5 | 40.71, 40.49, 40.71, 40.86, 41.32 | 40.82 | 0.31 |" in md
    assert "| prompt_shared | all seeds | 4622 | 70.08 | 597 | 18.23 |" in md  # Table XIV pooled row
    assert "| 1 | -4.78 | 927 | 876 |" in md  # Table XV: (537 - 600) / 1319


def test_one_seed_condition_is_stated(tmp_path):
    root = write_runs(tmp_path / "runs", {"solo": {1: {HARD: (10, 3)}}})
    rep = seed_report(load_runs(root))
    s = rep.summaries[0].summary
    assert s.sd is None and "one seed" in s.note
    md = rep.to_markdown()
    assert "one seed: no standard deviation" in md and "nan" not in md.lower()
    assert "NaN" not in json.dumps(rep.to_dict())


def test_missing_seed_in_one_condition_is_named(tmp_path):
    counts = {c: dict(v) for c, v in COUNTS.items()}
    del counts["judge"][4]
    root = write_runs(tmp_path / "runs", counts)
    with pytest.raises(ValueError, match=r"seed\(s\) \[4\] missing from 'judge'"):
        seed_report(load_runs(root), [("prompt_shared", "judge")])


def test_missing_metrics_file_is_named(runs):
    (runs / "judge" / "seed2" / "eval" / "or_bench_toxic" / "metrics.json").unlink()
    with pytest.raises(FileNotFoundError, match=r"judge/seed2/eval/or_bench_toxic/metrics.json"):
        load_runs(runs)


def test_seed_without_eval_folder_is_named(runs):
    (runs / "judge" / "seed6").mkdir()
    with pytest.raises(FileNotFoundError, match=r"seed6/eval/or_bench_hard_1k/metrics.json"):
        load_runs(runs)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda m: m.pop("matcher"), "missing key.*matcher"),
        (lambda m: m.update(seed=9), "seed is 9 but the folder says seed1"),
        (lambda m: m.update(refusal_rate=54.0), "proportion in \\[0, 1\\]"),
        (lambda m: m.update(refusal_rate=0.5), "its count gives"),
        (lambda m: m.update(n_refusals=2000), "exceeds n"),
        (lambda m: m.update(prompt_set="other"), "folder says 'or_bench_hard_1k'"),
    ],
)
def test_bad_metrics_file_is_named(runs, edit, message):
    path = runs / "judge" / "seed1" / "eval" / HARD / "metrics.json"
    m = metrics(HARD, 1, 600, 876)
    edit(m)
    path.write_text(json.dumps(m))
    with pytest.raises(ValueError, match=message) as exc:
        load_runs(runs)
    assert str(path) in str(exc.value)


def test_mixed_matchers_refused(runs):
    path = runs / "judge" / "seed1" / "eval" / HARD / "metrics.json"
    m = metrics(HARD, 1, 600, 876)
    m["matcher"] = "harmbench"
    path.write_text(json.dumps(m))
    with pytest.raises(ValueError, match="different matchers"):
        load_runs(runs)


def test_contrast_arguments():
    assert parse_contrast("a:b") == ("a", "b")
    for bad in ("a", "a:a", ":b", "a:b:c"):
        with pytest.raises(ValueError, match="FIRST:SECOND"):
            parse_contrast(bad)


def test_unknown_condition_in_contrast(runs):
    with pytest.raises(ValueError, match="no condition 'nope'"):
        seed_report(load_runs(runs), [("judge", "nope")])


def test_cli_writes_report_and_figures(runs, tmp_path, capsys):
    out = tmp_path / "rep"
    cmd = [
        "report",
        "seeds",
        str(runs),
        "--output_dir",
        str(out),
        "--json",
        "--contrast",
        "prompt_shared:judge",
    ]
    assert main(cmd) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["contrasts"][0]["first"] == "prompt_shared" and data["contrasts"][0]["df"] == 4
    assert sorted(p.name for p in out.iterdir()) == [
        ".spl_hf-output.json",
        "paired_prompt_shared_vs_judge.png",
        "refusal_by_condition.png",
        "report.json",
        "report.md",
    ]
    png = (out / "refusal_by_condition.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
    first = {p.name: p.read_bytes() for p in out.iterdir()}
    # Determinism: a second run (allowed with --overwrite) gives byte-identical files.
    assert main([*cmd, "--overwrite"]) == 0
    assert {p.name: p.read_bytes() for p in out.iterdir()} == first
    capsys.readouterr()
    assert main(cmd) == 2 and "--overwrite" in capsys.readouterr().err


def test_cli_default_output_next_to_the_runs(runs, capsys):
    assert main(["report", "seeds", str(runs), "--no_figures"]) == 0
    assert "Table XIV" in capsys.readouterr().out
    assert (runs / "report" / "report.md").is_file()
    assert len(load_runs(runs)) == 20  # the report folder is not taken for a condition


def test_cli_missing_seed_is_one_line_error(tmp_path):
    counts = {c: dict(v) for c, v in COUNTS.items()}
    del counts["prompt_shared"][2]
    root = write_runs(tmp_path / "runs", counts)
    res = procs.run(
        [sys.executable, "-m", "spl_hf.cli", "report", "seeds", str(root), "--no_figures"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 2
    assert "seed(s) [2] missing from 'prompt_shared'" in res.stderr and "Traceback" not in res.stderr


def test_illustrative_sweep_is_marked_and_readable(tmp_path):
    from pathlib import Path

    from spl_hf.demo.sample_runs import write_illustrative_runs

    root = write_illustrative_runs(tmp_path / "runs")
    runs = load_runs(root)
    assert {r.condition for r in runs} == {"prompt_shared", "judge"} and len(runs) == 20
    assert all(json.loads(Path(r.path).read_text())["illustrative"] is True for r in runs)
    with pytest.raises(ValueError, match="--overwrite"):
        write_illustrative_runs(root)


def test_one_seed_per_condition_still_reports_and_draws(tmp_path):
    from spl_hf.report import write_seed_report

    root = write_runs(
        tmp_path / "runs", {"base": {0: {HARD: (300, 900)}}, "adapter": {0: {HARD: (250, 880)}}}
    )
    report, out, written = write_seed_report(root, contrasts=[("adapter", "base")])
    k = report.contrasts[0].contrast
    assert k.differences == pytest.approx((100 * (250 - 300) / 1319,)) and k.summary.ci_low is None
    md = (out / "report.md").read_text()
    assert "adapter − base: one seed: no standard deviation or interval" in md
    assert sorted(p.name for p in written) == [
        "paired_adapter_vs_base.png",
        "refusal_by_condition.png",
        "report.json",
        "report.md",
    ]


def test_misnamed_seed_folder_is_reported(runs):
    (runs / "extra" / "seed_1").mkdir(parents=True)
    with pytest.raises(
        ValueError, match=r"extra: a condition folder needs seed<k> subfolders \(found \['seed_1'\]\)"
    ):
        load_runs(runs)
