"""A release's quality-gate record is recomputed by the audit: each gate's value, outcome and what it
concerns from the released judge scores and rows (its setting and minimum are the release's, stated).
A consistent forger (both records edited, the README rendered again, the manifest regenerated with the
package's own writer) is caught, and the failure names the file, the gate and both values."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pyarrow.parquet as pq
import pytest

from spl_hf.audit import audit
from spl_hf.release.gates import check_gates, gate_results
from tests.test_audit_claims import edit_json, reman

FILES = ("build_report.json", "card.json")


def _gates(folder: Path) -> dict[str, dict]:
    return {
        g["setting"]: g
        for g in json.loads((folder / "build_report.json").read_text())["quality_gates"]["gates"]
    }


@pytest.fixture(scope="module")
def gated_tenets(tmp_path_factory) -> Path:
    """A tenet build with the gate record a release writes: figures of every judged score before the
    assignment (the release's :func:`spl_hf.build.judged_quality`), a position gate set at the overall
    figure (it passes, naming the tenets below it), a label-mass and a pool gate, and min_rows."""
    from spl_hf.build import judged_quality
    from spl_hf.build.tenets import TenetBuildConfig, build_tenets
    from tests.audit_fixtures import tenet_inputs

    root = tmp_path_factory.mktemp("gated_tenets")
    pairs, scores = tenet_inputs(root)
    cfg = TenetBuildConfig(
        pairs=str(pairs), scores=str(scores), capacity=2, threshold=0.3, output_dir=str(root / "plain")
    )
    rows = build_tenets(cfg).rows
    section = judged_quality(pq.read_table(scores), pq.read_table(pairs), cfg.threshold)
    overall = section["overall"]["position"]["rates"]["consistent"]
    # min_pool_agreement 0 could never fail, so a release config refuses it; the audit still recomputes
    # whatever minimum a record states (a SimpleNamespace stands in for the config here).
    settings = SimpleNamespace(
        min_position_consistency=overall, min_median_label_mass=0.5, min_pool_agreement=0.0, min_rows=rows
    )
    record = check_gates(gate_results(section, rows, settings, []), "set for the test")
    assert record["gates"][0]["concerned"], "the position gate names the tenets below the overall figure"
    return build_tenets(replace(cfg, output_dir=str(root / "ds")), gates=record).path


@pytest.fixture(scope="module")
def gated_spl(tmp_path_factory) -> Path:
    """The SPL sample built as a release builds it: with its min_rows gate recorded."""
    from spl_hf.build import SPLBuildConfig, build_spl

    out = tmp_path_factory.mktemp("gated_spl") / "ds"
    build_spl(SPLBuildConfig(output_dir=str(out)), min_rows=1, gates_note="an empty release is an error")
    return out


def _forge(src: Path, tmp_path: Path, edit: Callable[[dict], None]) -> Path:
    """A copy with ``edit`` applied to the record of both files, the README rendered again from
    card.json (`spl-hf card`) and the manifest regenerated."""
    from spl_hf.dataset import regenerate_card

    folder = Path(shutil.copytree(src, tmp_path / "b"))
    edit_json(folder / "build_report.json", lambda d: edit(d["quality_gates"]))
    edit_json(folder / "card.json", lambda d: edit(d["kwargs"]["quality_gates"]))
    regenerate_card(folder)
    reman(folder)
    return folder


def _failures(folder: Path) -> list[str]:
    report = audit(folder)
    assert report.manifest.ok  # the forger's manifest agrees: only the recomputation can tell
    assert not report.ok
    return report.failures


def _gate(setting: str, edit: Callable[[dict], None]) -> Callable[[dict], None]:
    def apply(record: dict) -> None:
        (gate,) = [g for g in record["gates"] if g["setting"] == setting]
        edit(gate)

    return apply


def test_untampered_gated_builds_audit_clean_and_show_their_gates(gated_tenets, gated_spl):
    for folder in (gated_tenets, gated_spl):
        report = audit(folder)
        assert report.ok, report.failures
        readme = (folder / "README.md").read_text(encoding="utf-8")
        assert "## Quality gates" in readme and "| `min_rows` | rows of the release |" in readme
    assert set(_gates(gated_tenets)) == {
        "min_position_consistency",
        "min_median_label_mass",
        "min_pool_agreement",
        "min_rows",
    }
    spl = json.loads((gated_spl / "card.json").read_text())["kwargs"]["quality_gates"]
    labeled = json.loads((gated_spl / "build_report.json").read_text())["labeled"]
    assert spl == {
        "passed": True,
        "note": "an empty release is an error",
        "gates": [
            {
                "setting": "min_rows",
                "figure": "rows of the release",
                "value": labeled,
                "minimum": 1,
                "passed": True,
                "concerned": [],
            }
        ],
    }


def test_a_changed_gate_value_is_caught_naming_the_gate_and_both_values(gated_tenets, tmp_path):
    recorded = _gates(gated_tenets)["min_median_label_mass"]["value"]
    folder = _forge(gated_tenets, tmp_path, _gate("min_median_label_mass", lambda g: g.update(value=0.99)))
    for file in FILES:
        assert (
            f"{file}: quality_gates.gates[min_median_label_mass].value is 0.99, recomputed {recorded!r}"
            in _failures(folder)
        )


def test_a_flipped_outcome_is_caught(gated_tenets, tmp_path):
    def flip(record: dict) -> None:
        record["passed"] = False
        _gate("min_pool_agreement", lambda g: g.update(passed=False))(record)

    failures = _failures(_forge(gated_tenets, tmp_path, flip))
    assert "build_report.json: quality_gates.passed is False, recomputed True" in failures
    assert "build_report.json: quality_gates.gates[min_pool_agreement].passed is False, recomputed True" in (
        failures
    )


def test_a_gate_the_figures_fail_is_caught_though_recorded_as_passed(gated_tenets, tmp_path):
    # The minimum is the release's (stated), so the audit compares the recomputed figure with it.
    folder = _forge(gated_tenets, tmp_path, _gate("min_median_label_mass", lambda g: g.update(minimum=0.9)))
    assert (
        "build_report.json: quality_gates.gates[min_median_label_mass].passed is True, recomputed False"
        in _failures(folder)
    )


def test_a_removed_concerned_tenet_is_caught(gated_tenets, tmp_path):
    concerned = _gates(gated_tenets)["min_position_consistency"]["concerned"]
    folder = _forge(gated_tenets, tmp_path, _gate("min_position_consistency", lambda g: g["concerned"].pop()))
    last = f"quality_gates.gates[min_position_consistency].concerned[{len(concerned) - 1}]"
    assert f"build_report.json: {last} is 'missing', recomputed {concerned[-1]!r}" in _failures(folder)


def test_a_removed_row_gate_and_a_record_in_one_file_only_are_caught(gated_tenets, tmp_path):
    def drop_rows(record: dict) -> None:
        record["gates"] = [g for g in record["gates"] if g["setting"] != "min_rows"]

    failures = _failures(_forge(gated_tenets, tmp_path / "rows", drop_rows))
    assert (
        "build_report.json: quality_gates has no min_rows gate; a release always gates its rows" in failures
    )
    # A judge gate dropped from the report alone: the two records the build writes no longer agree.
    folder = Path(shutil.copytree(gated_tenets, tmp_path / "one"))
    edit_json(folder / "build_report.json", lambda d: d["quality_gates"]["gates"].pop(0))
    reman(folder)
    assert (
        "card.json: quality_gates differs from build_report.json's (the build writes one record to both)"
        in _failures(folder)
    )


def test_an_spl_gate_record_is_recomputed_from_the_labeled_pairs(gated_spl, tmp_path):
    labeled = _gates(gated_spl)["min_rows"]["value"]
    folder = _forge(gated_spl, tmp_path / "value", _gate("min_rows", lambda g: g.update(value=labeled + 5)))
    assert (
        f"build_report.json: quality_gates.gates[min_rows].value is {labeled + 5}, recomputed {labeled}"
        in _failures(folder)
    )

    def judge_gate(record: dict) -> None:  # an SPL release has no judge figures to gate
        record["gates"].insert(0, {**record["gates"][0], "setting": "min_pool_agreement", "minimum": 0.1})

    failures = _failures(_forge(gated_spl, tmp_path / "judge", judge_gate))
    assert any(
        f.startswith("card.json: quality_gates lists a gate 'min_pool_agreement', not one") for f in failures
    )
