"""Quality gates: a useless judge or an empty release stops before the write stage (exit 2), the judge's
work stays cached, the outcome is recorded in the build, and publish refuses empty or gate-failed builds."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pytest

from spl_hf.cli import main
from spl_hf.contract import judge_quality_section
from spl_hf.release.config import SPLReleaseConfig, TenetReleaseConfig
from spl_hf.release.gates import GateFailed, check_gates, gate_results
from tests.conftest import REPO
from tests.test_release import PKU_PROMPT, _tenet_args


@pytest.fixture
def heldout_csv(tmp_path: Path) -> Path:
    path = tmp_path / "heldout.csv"
    path.write_text(f'prompt,category\n"{PKU_PROMPT}",illegal\n')
    return path


def _first_slot_scores() -> pa.Table:
    """Two tenets judged by a judge that always prefers the first-shown answer; the pools say 'a' and 'b'."""
    rows = []
    for i in range(8):
        for tenet in ("t1", "t2"):
            p1 = 0.9 if tenet == "t1" else 0.7
            rows.append(
                {
                    "pair_id": f"p{i}",
                    "source": "hh" if i % 2 else "pku",
                    "tenet": tenet,
                    "p_a_first": p1,
                    "p_a_second": 0.6 if i % 3 else 0.4,  # a few consistent judgements for t1 and t2
                    "mass_first": 0.3,
                    "mass_second": 0.2,
                    "source_preference": "a" if i % 4 < 2 else "b",
                }
            )
    return pa.Table.from_pylist(rows)


def _cfg(**gates) -> TenetReleaseConfig:
    return TenetReleaseConfig(**gates)


def test_each_gate_names_its_figure_value_setting_and_what_it_concerns():
    section = judge_quality_section(_first_slot_scores(), {}, threshold=0.05, capacity=0)
    cfg = _cfg(min_position_consistency=0.5, min_pool_agreement=0.5, min_median_label_mass=0.5, min_rows=3)
    results = gate_results(section, 2, cfg, ["0 of 2 tenets kept"])
    assert [r.setting for r in results if not r.passed] == [
        "min_position_consistency",
        "min_median_label_mass",
        "min_pool_agreement",
        "min_rows",
    ]
    with pytest.raises(GateFailed) as err:
        check_gates(results)
    text = str(err.value)
    position = section["overall"]["position"]["rates"]["consistent"]
    assert f"position consistency is {position:.4g}, below min_position_consistency 0.5 (t1 " in text
    assert "median label mass is 0.25, below min_median_label_mass 0.5 (t1 0.250, t2 0.250)" in text
    assert "below min_pool_agreement 0.5 (hh 0.215, pku 0.215)" in text  # 4 of 8 agree: chance
    assert "rows of the release is 2, below min_rows 3 (0 of 2 tenets kept)" in text
    # Lowered gates pass, and the record says what each compared.
    low = _cfg(min_position_consistency=0.01, min_pool_agreement=0.01, min_median_label_mass=0.01, min_rows=1)
    record = check_gates(gate_results(section, 2, low, []), "demo")
    assert record["passed"] and record["note"] == "demo" and len(record["gates"]) == 4


def test_unset_judge_gates_are_not_checked_and_min_rows_defaults_to_one():
    section = judge_quality_section(_first_slot_scores(), {}, threshold=0.05, capacity=0)
    assert [r.setting for r in gate_results(section, 5, _cfg(), [])] == ["min_rows"]
    with pytest.raises(GateFailed, match="rows of the release is 0, below min_rows 1"):
        check_gates(gate_results(section, 0, _cfg(), []))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"min_rows": -1}, "min_rows must be a whole number >= 0"),
        ({"min_position_consistency": 1.5}, "min_position_consistency must be a number in (0, 1]"),
        ({"min_pool_agreement": -2.0}, "min_pool_agreement must be a number in (0, 1)"),
        ({"min_median_label_mass": float("nan")}, "min_median_label_mass must be a number in (0, 1]"),
        # gates that can never fail, or never pass, are refused when the recipe is read, named
        (
            {"min_position_consistency": 0.0},
            "min_position_consistency must be a number in (0, 1] or None, got 0.0: at 0",
        ),
        (
            {"min_median_label_mass": 0},
            "min_median_label_mass must be a number in (0, 1] or None, got 0: at 0 or below the gate can never fail",
        ),
        ({"min_pool_agreement": 1.0}, "a Wilson lower bound is below 1 for any number of pairs"),
    ],
)
def test_gate_settings_are_checked_on_the_config(kwargs, message):
    import re

    with pytest.raises(ValueError, match=re.escape(message)):
        TenetReleaseConfig(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"recorded_prompts": "sample"}, "recorded_prompts and recorded_candidates go together"),
        ({"prompt_sources": ["xstest=x"], "verdict_model": "m"}, "verdict_model is the model of the verdict"),
        ({}, "give either prompt_sources"),
        (
            {"prompt_sources": ["xstest=x"], "labeler_mode": "free"},
            "labeler_mode must be 'constrained' or 'json'",
        ),
        (
            {"prompt_sources": ["xstest=x"], "pool_sizes": ["ultrachat=3"]},
            "pool_sizes: ['ultrachat'] are not",
        ),
        (
            {"prompt_sources": ["xstest=x"], "pool_sizes": ["xstest=0"]},
            "pool_sizes xstest: must be at least 1",
        ),
    ],
)
def test_spl_release_settings_are_refused_by_the_config_itself(kwargs, message):
    # No file is read and no release object made: the config alone refuses (so a recipe parse does too).
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        SPLReleaseConfig(**kwargs)


def test_a_recipe_parse_and_a_dry_run_reach_the_release_checks(tmp_path, capsys):
    from spl_hf.recipes import parse_recipe

    recipe = REPO / "recipes" / "spl" / "paper.yaml"
    with pytest.raises(ValueError, match="candidate_fraction: \\['nosuch'\\] are not among prompt_sources"):
        parse_recipe(recipe, "--candidate_fraction", "nosuch=0.5")
    argv = ["release", "spl", "--config", str(recipe), "--dry_run", "--recorded_prompts", "sample"]
    assert main([*argv, "--run_dir", str(tmp_path / "r"), "--output_dir", str(tmp_path / "d")]) == 2
    assert "recorded_prompts and recorded_candidates go together" in capsys.readouterr().err


def test_publish_refuses_an_empty_build_and_one_whose_gates_failed(tmp_path, monkeypatch):
    import pyarrow.parquet as pq

    from spl_hf.build import judged_quality
    from spl_hf.build.tenets import TenetBuildConfig, build_tenets
    from spl_hf.contract import gate_record
    from spl_hf.hub import publish
    from tests.audit_fixtures import tenet_inputs

    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # never reached: refused before any request
    pairs, scores = tenet_inputs(tmp_path)
    empty = build_tenets(
        TenetBuildConfig(pairs=str(pairs), scores=str(scores), capacity=1000, output_dir=str(tmp_path / "e"))
    )
    assert empty.rows == 0
    with pytest.raises(ValueError, match="holds no preference rows.*nothing published"):
        publish(empty.path, "org/empty")
    # A record the audit recomputes to the same: the judge stage's figures (every judged score, before
    # assignment) and the build's rows, with a position gate the made-up judge (a coin) does not meet.
    cfg = TenetBuildConfig(pairs=str(pairs), scores=str(scores), capacity=2, output_dir=str(tmp_path / "g0"))
    rows = build_tenets(cfg).rows
    section = judged_quality(pq.read_table(scores), pq.read_table(pairs), cfg.threshold)
    results = gate_results(section, rows, _cfg(min_position_consistency=0.7), [])
    failed = gate_record(results, "")
    value = section["overall"]["position"]["rates"]["consistent"]
    assert not failed["passed"] and value < 0.7
    built = build_tenets(replace(cfg, output_dir=str(tmp_path / "g")), gates=failed)
    assert json.loads((built.path / "build_report.json").read_text())["quality_gates"] == failed
    assert f"| `min_position_consistency` | position consistency | 0.7 | {value:.4g} | **no** |" in (
        built.path / "README.md"
    ).read_text(encoding="utf-8")
    # The record is the one recomputed, so publish refuses it for its failed gate, not for its audit.
    with pytest.raises(
        ValueError, match=rf"quality gates failed: min_position_consistency \({value} < 0.7\)"
    ):
        publish(built.path, "org/gated")


def _stage_skips(run_dir: Path) -> dict[str, bool]:
    report = json.loads((run_dir / "run_report.json").read_text())
    return {s["name"]: s["skipped"] for s in report["stages"]}


@pytest.mark.slow
def test_a_failing_gate_stops_before_writing_and_lowering_it_reruns_only_what_follows(
    tmp_path, tiny_model_dir, heldout_csv, capsys
):
    # Capacity beyond the pools: no tenet is kept, and the default min_rows 1 refuses the empty release.
    assert main(_tenet_args(tmp_path, tiny_model_dir, heldout_csv, capacity="1000")) == 2
    err = capsys.readouterr().err
    assert "rows of the release is 0, below min_rows 1 (0 of 3 tenets kept at capacity 1000)" in err
    assert not (tmp_path / "ds").exists()
    # A judge gate no judge meets (all probability on the labels) stops it too, naming the figure.
    args = _tenet_args(tmp_path, tiny_model_dir, heldout_csv, min_median_label_mass="1.0")
    assert main(args) == 2
    out, err = capsys.readouterr()
    assert "judge quality: judged " in out and "below min_median_label_mass 1" in err
    assert not (tmp_path / "ds").exists()
    # Lowered: the judge and assign stages are reused, only write and audit run.
    assert main(_tenet_args(tmp_path, tiny_model_dir, heldout_csv, min_median_label_mass="1e-9")) == 0
    skipped = _stage_skips(tmp_path / "run")
    assert skipped["judge"] and skipped["assign"] and skipped["read"]
    assert not skipped["write"] and not skipped["audit"]
    gates = json.loads((tmp_path / "ds" / "build_report.json").read_text())["quality_gates"]
    assert gates["passed"] and [g["setting"] for g in gates["gates"]] == ["min_median_label_mass", "min_rows"]


def test_an_spl_release_below_min_rows_is_neither_audited_nor_published(tmp_path, capsys):
    recipe = str(REPO / "recipes" / "spl" / "sample.yaml")
    argv = ["release", "spl", "--config", recipe, "--run_dir", str(tmp_path / "run")]
    argv += ["--output_dir", str(tmp_path / "ds"), "--repo_id", "org/never"]
    assert main([*argv, "--min_rows", "73"]) == 2  # the sample labels 72 pairs
    assert "rows of the release is 72, below min_rows 73" in capsys.readouterr().err
    stages = {p.name.split("-")[0] for p in (tmp_path / "run" / "stages").iterdir()}
    assert stages == {"write"} and not (tmp_path / "run" / "run_report.json").exists()
    # The build keeps the failed record (publish refuses it); met, the release's record is the build's.
    report = tmp_path / "ds" / "build_report.json"
    assert json.loads(report.read_text())["quality_gates"]["passed"] is False
    assert main([*argv[:-2], "--min_rows", "72", "--overwrite"]) == 0
    gates = json.loads((tmp_path / "run" / "run_report.json").read_text())["quality_gates"]
    assert gates["passed"] and gates == json.loads(report.read_text())["quality_gates"]
