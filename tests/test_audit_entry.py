"""spl_hf.audit.audit: one entry point, one result shape for both kinds of build."""

import json

from spl_hf.audit import audit
from spl_hf.cli import main
from spl_hf.manifest import MANIFEST
from tests.audit_fixtures import copy_build, reseal, rewrite, tenet_files

COMMON = {"kind", "ok", "rows", "reproduced", "mismatch_count", "mismatches", "failures", "notes"}


def test_an_spl_build_audits_clean_with_its_own_rule_base(built_spl):
    report = audit(built_spl)
    assert report.kind == "spl" and report.ok and report.failures == []
    assert report.rows == report.reproduced > 0 and report.mismatch_count == 0
    assert report.manifest is not None and report.manifest.ok
    d = report.to_dict()
    assert COMMON | {"rulebase_id", "rulebase_hash", "rulebase_source", "splits"} <= d.keys()
    assert d["manifest_mismatches"] == d["unlisted_files"] == [] and report.describe_failure() == ""


def test_a_tenet_build_reports_its_certificate_in_the_same_shape(built_tenets):
    report = audit(built_tenets, config="all")
    assert report.kind == "tenets" and report.ok and report.certificate_ok is True
    assert report.rows == report.reproduced > 0
    assert any("--config_name is ignored" in n for n in report.notes)
    assert COMMON | {"certificate_ok", "certificate_failures"} <= report.to_dict().keys()


def test_the_cli_prints_what_the_library_returns(built_tenets, capsys):
    assert main(["audit", str(built_tenets), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads(json.dumps(audit(built_tenets).to_dict()))


def test_a_tampered_row_fails_and_says_which(built_tenets, tmp_path):
    folder = copy_build(built_tenets, tmp_path / "t")
    shard = tenet_files(folder)[0]

    def flip(rows):
        rows[0]["chosen"], rows[0]["rejected"] = rows[0]["rejected"], rows[0]["chosen"]

    rewrite(shard, flip)
    report = audit(folder)
    assert not report.ok and report.describe_failure().startswith(f"files differ from {MANIFEST}")
    reseal(folder)  # a consistent forger: the manifest agrees, the rows do not
    report = audit(folder)
    assert not report.ok and report.manifest.ok and report.mismatch_count >= 1
    assert "rows do not reproduce" in report.describe_failure()
