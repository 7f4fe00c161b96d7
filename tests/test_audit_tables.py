import json

from spl_hf.cli import main
from spl_hf.contract import composition_tables


def test_tables_count_labeled_pairs_by_verdicts_rules_and_topic(sample_derived):
    t = composition_tables(sample_derived)
    assert t.total_pairs == 144 and t.labeled_pairs == 72
    assert sum(r.pairs for r in t.verdict_pairs) == 72
    assert sum(r.pairs for r in t.rule_pairs) == 72
    assert sum(r.pairs for r in t.topics) == 72
    verdicts = {(r.preferred_verdict, r.rejected_verdict): r.pairs for r in t.verdict_pairs}
    assert verdicts[("helpful_compliance", "unjustified_refusal")] == 39
    rules = {(r.preferred_rules, r.rejected_rules): (r.rank_difference, r.pairs) for r in t.rule_pairs}
    assert rules[("R6", "R1")] == (3, 28)
    assert rules[("R8", "R2")] == (1, 5)
    assert rules[("R3+R9", "R5")] == (3, 9)
    benign = next(r for r in t.topics if r.topic == "benign")
    assert (benign.pairs, benign.prompts) == (28, 16)
    assert t.no_label == {"no_verdict": 32, "equal_ranks": 23, "missing_attributes": 17}


def test_tables_markdown_and_cli(built_spl, capsys):
    assert main(["tables", str(built_spl), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["labeled_pairs"] == 72
    assert main(["tables", str(built_spl)]) == 0
    md = capsys.readouterr().out
    assert "| justified_refusal | R3+R9 | harmful_compliance | R5 | 3 | 9 |" in md
