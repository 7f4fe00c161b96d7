"""The whole-build SPL audit: rule and judge rows recomputed, and every config holding exactly its pairs."""

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from spl_hf.audit.load import read_folder
from spl_hf.audit.spl.folder import audit_spl_folder
from spl_hf.cli import main
from spl_hf.contract import stated_key
from spl_hf.rules import default_rulebase
from tests.audit_fixtures import reseal
from tests.conftest import edit_first_file


def _audit(folder: Path):
    return audit_spl_folder(read_folder(folder, manifest=False), default_rulebase())


def test_a_build_with_judge_configs_audits_clean(built_spl_judge, capsys):
    assert main(["audit", str(built_spl_judge), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    report = json.loads((built_spl_judge / "build_report.json").read_text())
    common = report["judge"]["tables"]["common_support"]
    assert out["failures"] == [] and out["mismatch_count"] == 0
    # Rule rows: preferences + derivations + both common-support configs; judge rows: every pair + both again.
    assert out["rows"] == report["labeled"] + report["tables"]["total_pairs"] + 2 * common
    assert out["judge"] == {
        "rows": report["tables"]["total_pairs"] + 2 * common,
        "reproduced": report["tables"]["total_pairs"] + 2 * common,
        "mismatch_count": 0,
    }


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            "common_support",
            "common_support: 1 pair(s) of the pairs labeled by both the rules and the judge are missing",
        ),
        ("common_support_judge", "common_support_judge: 1 pair(s) of the pairs labeled by both"),
        ("preferences", "preferences: 1 pair(s) of the labeled pairs of derivations are missing"),
        ("judge_derivations", "judge_derivations: 1 pair(s) of every pair of derivations are missing"),
    ],
)
def test_a_row_removed_from_a_config_is_caught(judge_copy, config, message):
    # Every remaining row still reproduces: only the check of which pairs a config holds sees this.
    edit_first_file(judge_copy, config, lambda rows: rows.pop())
    result = _audit(judge_copy)
    assert result.rules.ok and (result.judge is None or result.judge.ok)
    assert any(f.startswith(message) for f in result.failures), result.failures


def test_a_pair_that_is_not_common_support_is_caught(judge_copy):
    extra = pq.read_table(sorted((judge_copy / "derivations").glob("*.parquet"))[0]).to_pylist()
    outside = next(r for r in extra if r["derivation"]["label"] is None)
    jd = {
        r["pair_id"]: r["judge"]
        for f in sorted((judge_copy / "judge_derivations").glob("*.parquet"))
        for r in pq.read_table(f).to_pylist()
    }
    edit_first_file(
        judge_copy, "common_support", lambda rows: rows.append({**outside, "judge": jd[outside["pair_id"]]})
    )
    failures = _audit(judge_copy).failures
    assert any(
        f.startswith("common_support: 1 pair(s) that are not the pairs labeled by both") for f in failures
    )


def test_a_whole_judge_config_removed_from_card_and_folder_is_caught(judge_copy):
    readme = judge_copy / "README.md"
    _, meta, body = readme.read_text().split("---", 2)
    data = yaml.safe_load(meta)
    data["configs"] = [c for c in data["configs"] if c["config_name"] != "common_support"]
    readme.write_text("---\n" + yaml.safe_dump(data, sort_keys=False) + "---" + body)
    shutil.rmtree(judge_copy / "common_support")
    failures = _audit(judge_copy).failures
    assert any(
        "build_report.json records verdict-judge labels, but the card declares no common_support" in f
        for f in failures
    )
    assert any(f.startswith("common_support: ") and "labeled under both" in f for f in failures)


def test_auditing_one_config_says_the_configs_were_not_compared(built_spl_judge, capsys):
    assert main(["audit", str(built_spl_judge), "--config_name", "common_support", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert any("not checked against each other" in n for n in out["notes"])


def _edit_json(path: Path, edit) -> None:
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")


def test_the_build_names_the_verdict_judge_of_the_judge_column(built_spl_judge):
    report = json.loads((built_spl_judge / "build_report.json").read_text())
    (judge,) = report["producers"]["verdict_judge"]["identities"]
    assert judge["model_id"] == report["judge"]["model_id"] and judge["mode"] == "constrained"
    quality = report["label_quality"]["verdict_judge"]
    assert quality["candidates"] == 144 and quality["status"]["not_judged"] > 0
    assert 0 <= quality["off_label_mass"]["q10"] <= quality["off_label_mass"]["q90"] <= 1
    assert _audit(built_spl_judge).failures == []


@pytest.mark.parametrize(
    ("file", "edit", "message"),
    [
        (
            "build_report.json",
            lambda d: d["producers"].pop("labeler"),
            "build_report.json: producers.labeler is missing",
        ),
        (
            "build_report.json",
            lambda d: d["producers"]["verdict_judge"]["identities"][0].update(model_id="other/judge"),
            "build_report.json: producers.verdict_judge names [('other/judge'",
        ),
        (
            "build_report.json",
            lambda d: d["label_quality"]["released_status"]["response"].update(ok=1),
            "build_report.json: label_quality.released_status response.ok is 1, recomputed",
        ),
        (
            "build_report.json",
            lambda d: d["label_quality"]["verdict_judge"]["off_label_mass"].update(q50=0.5),
            "build_report.json: label_quality.verdict_judge off_label_mass.q50 is 0.5",
        ),
        (
            "card.json",
            lambda d: d["kwargs"]["producers"]["generator"].update(identities=[{"model_id": "x"}]),
            "card.json: producers differ from build_report.json",
        ),
        (
            "card.json",
            lambda d: d["kwargs"]["released_status"]["prompt"].update(ok=0),
            "card.json: released_status prompt.ok is 0",
        ),
    ],
)
def test_an_edited_producer_or_quality_figure_is_caught(judge_copy, file, edit, message):
    _edit_json(judge_copy / file, edit)
    failures = _audit(judge_copy).failures
    assert any(f.startswith(message) for f in failures), failures


def test_a_build_whose_rows_name_their_producers_audits_clean(built_spl_producers, capsys):
    assert main(["audit", str(built_spl_producers), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["failures"] == []


def _forged_key(rows):
    rows[0]["producers"]["response_b_labeler"] = "0123456789abcdef"


def _extra_identity(data):
    producers = data["kwargs"]["producers"] if "kwargs" in data else data["producers"]
    ident = {**producers["labeler"]["identities"][0], "model_id": "org/unused"}
    producers["labeler"]["identities"].append({**ident, "key": stated_key(ident)})


def _edited_report_key(data):
    producers = data["kwargs"]["producers"] if "kwargs" in data else data["producers"]
    producers["generator"]["identities"][0]["key"] = "0123456789abcdef"


@pytest.mark.parametrize(
    ("rows", "report", "message"),
    [
        (
            _forged_key,
            None,
            "derivations/xstest row 0 (pair 'c1__c2'): producers.response_b_labeler '0123456789abcdef' is no "
            "labeler identity build_report.json lists",
        ),
        (None, _extra_identity, "build_report.json: producers.labeler lists key(s) ["),
        (
            None,
            _edited_report_key,
            "build_report.json: producers.generator identity 'org/generator' has key '0123456789abcdef', "
            "its identity fields give",
        ),
    ],
)
def test_a_producer_key_the_report_does_not_list_is_caught(
    built_spl_producers, tmp_path, capsys, rows, report, message
):
    folder = tmp_path / "ds"
    shutil.copytree(built_spl_producers, folder)
    if rows:
        edit_first_file(folder, "derivations", rows)
    if report:  # report and card edited alike, so only the rows can tell
        _edit_json(folder / "build_report.json", report)
        _edit_json(folder / "card.json", report)
    reseal(folder)  # a consistent forger: the manifest agrees
    assert main(["audit", str(folder), "--json"]) == 1
    failures = json.loads(capsys.readouterr().out)["failures"]
    assert any(f.startswith(message) for f in failures), failures
