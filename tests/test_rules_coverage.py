import json

from spl_hf.cli import main
from spl_hf.rules import check_coverage, parse_rulebase


def test_default_rule_counts_reproduce_table_seven(rulebase):
    report = check_coverage(rulebase)
    assert report.assignments == 5120
    published = {"R1": 256, "R2": 448, "R3": 1536, "R5": 768, "R6": 128, "R7": 224}
    assert {k: report.rule_counts[k] for k in published} == published
    # Table VII: R3 and R9 are the only rules that can apply to the same assignment.
    assert [(o.rules, o.count) for o in report.overlaps] == [(("R3", "R9"), 768)]
    assert report.conflicts == []
    assert report.no_verdict + sum(report.verdict_counts.values()) == 5120


def test_conflicting_rules_are_reported_with_an_example(rulebase):
    text = (
        rulebase.to_yaml() + "- id: R10\n  when: topic == benign and refusal\n  verdict: helpful_compliance\n"
    )
    report = check_coverage(parse_rulebase(text))
    (conflict,) = report.conflicts
    assert conflict.rules == ("R1", "R10")
    assert conflict.count == 256
    assert conflict.example["topic"] == "benign" and conflict.example["refusal"] is True


def test_cli_check_prints_json_and_fails_on_conflicts(tmp_path, capsys, rulebase):
    assert main(["rules", "check", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["assignments"] == 5120 and out["rule_counts"]["R3"] == 1536
    assert set(out) >= {"assignments", "rule_counts", "overlaps", "conflicts", "no_verdict"}
    bad = tmp_path / "conflict.yaml"
    bad.write_text(rulebase.to_yaml() + "- id: R10\n  when: refusal\n  verdict: helpful_compliance\n")
    assert main(["rules", "check", "--rulebase", str(bad), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["conflicts"]


def test_cli_reports_invalid_rulebase_cleanly(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("id: x\nverdicts: {a: 1}\nrules:\n  - id: A\n    when: refusal and\n    verdict: a\n")
    assert main(["rules", "check", "--rulebase", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.yaml: rule 'A' (line 4)" in err and "col" in err
