"""Hostile rule bases: clear errors naming file, rule/predicate and line; linear work on shared predicates.

Cost is asserted as work (distinct nodes compiled and node evaluations), never as seconds.
"""

from __future__ import annotations

import numpy as np
import pytest

from spl_hf.cli import main
from spl_hf.rules import RuleBaseError, check_coverage, load_rulebase, parse_rulebase
from spl_hf.rules import compile as rules_compile
from spl_hf.rules.apply import apply_rules, apply_rules_row
from spl_hf.rules.coverage import cofiring_pairs, enumerate_assignments
from spl_hf.rules.rulebase import MAX_RANK, MAX_RULES, MAX_YAML_DEPTH

RULE = "  - id: A\n    when: refusal\n    verdict: good\n"
VERDICTS = "  good: 1\n  bad: 0\n"


def base(rules: str = RULE, predicates: str = "", verdicts: str = VERDICTS) -> str:
    preds = "predicates:\n" + predicates if predicates else ""
    return "id: t\n" + preds + "verdicts:\n" + verdicts + "rules:\n" + rules


def doubling(n: int) -> str:
    preds = "  q0: refusal\n" + "".join(
        f"  q{i}: q{i - 1} and (q{i - 1} or partial)\n" for i in range(1, n + 1)
    )
    return base(f"  - id: A\n    when: q{n}\n    verdict: good\n", preds)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            base(predicates="  1: refusal\n"),
            "predicate 1 (line 3): a predicate must be a name (a string), got int",
        ),
        (base(predicates="  true: refusal\n"), "predicate True (line 3): a predicate must be a name"),
        (base(predicates="  null: refusal\n"), "predicate None (line 3): a predicate must be a name"),
        (base(verdicts="  7: 1\n  good: 0\n"), "verdict 7 (line 3): a verdict must be a name"),
        (
            base("  - id: A\n    when: refusal\n    verdict: [good]\n"),
            "rule 'A' (line 6): verdict ['good'] is not",
        ),
        (base(verdicts=f"  good: {10**30}\n  bad: 0\n"), f"verdict 'good' (line 3): rank {10**30} outside"),
        (base(verdicts="  good: 1.5\n  bad: 0\n"), "rank must be an integer"),
        (
            base(RULE + "    reconstructed: 'false'\n"),
            "rule 'A' (line 6): 'reconstructed' must be true or false",
        ),
        (
            base(predicates="  and: refusal\n"),
            "predicate 'and' (line 3): a predicate 'and' is not a valid name",
        ),
        (base(predicates="  not: refusal\n"), "predicate 'not' (line 3)"),
        (base(predicates="  or: refusal\n"), "predicate 'or' (line 3)"),
        (base(predicates="  in: refusal\n"), "predicate 'in' (line 3)"),
        (
            base(predicates="  'my pred!': refusal\n"),
            "predicate 'my pred!' (line 3): a predicate 'my pred!' is not",
        ),
        (base(predicates="  '': refusal\n"), "predicate '' (line 3)"),
        ("id: {a: 1}\nverdicts: {good: 1}\nrules:\n" + RULE, "x.yaml: 'id' must be a non-empty string"),
        ("id: null\nverdicts: {good: 1}\nrules:\n" + RULE, "'id' must be a non-empty string"),
        (base("  - id: null\n    when: refusal\n    verdict: good\n"), "rule #1 (line 6): 'id' must be"),
        (
            base() + "verdicts:\n  good: 0\n  bad: 1\n",
            "x.yaml: line 9: duplicate key 'verdicts' (first on line 2)",
        ),
        (base(RULE + "    when: partial\n"), "line 9: duplicate key 'when' (first on line 7)"),
        ("id: t\nx: " + "[" * 3000 + "]" * 3000 + "\n", "x.yaml: "),
        (
            "id: t\n" + "".join(" " * i + f"k{i}:\n" for i in range(3000)),
            f"nested deeper than {MAX_YAML_DEPTH}",
        ),
        (base(predicates="  p: q\n  q: r\n  r: p\n"), "refers to itself through p -> q -> r -> p"),
    ],
)
def test_hostile_rule_bases_fail_with_a_clear_error(text: str, message: str) -> None:
    with pytest.raises(RuleBaseError) as info:
        parse_rulebase(text, "x.yaml")
    assert str(info.value).startswith("x.yaml: ")
    assert message in str(info.value)


def test_limits_on_size_are_explicit(monkeypatch) -> None:
    import spl_hf.rules.rulebase as rulebase_module

    assert MAX_RULES >= 20_000  # the documented scale is accepted
    monkeypatch.setattr(rulebase_module, "MAX_RULES", 10)
    rules = "".join(f"  - id: R{i}\n    when: refusal\n    verdict: good\n" for i in range(11))
    with pytest.raises(RuleBaseError, match="x.yaml: 11 rules, more than the limit of 10"):
        parse_rulebase(base(rules), "x.yaml")
    monkeypatch.setattr(rules_compile, "MAX_NODES", 3)
    with pytest.raises(RuleBaseError, match="x.yaml: conditions compile to more than 3 distinct nodes"):
        parse_rulebase(
            base("  - id: A\n    when: refusal and partial and steps\n    verdict: good\n"), "x.yaml"
        )
    with pytest.raises(RuleBaseError, match=f"outside \\[-{MAX_RANK}, {MAX_RANK}\\]"):
        parse_rulebase(base(verdicts=f"  good: {-MAX_RANK - 1}\n  bad: 0\n"), "x.yaml")


def test_aliases_count_the_text_they_repeat(tmp_path, capsys) -> None:
    # reliability review F1: 2,000 rules aliasing one 9.9k-character condition, 117 KB on disk,
    # ran past 150 s; the limit now counts the expanded text and refuses it before any parse.
    import time

    cond = " or ".join(["(refusal and partial)"] * 400)
    assert 9_000 < len(cond) < 10_000
    rules = f"  - {{id: R0, when: &e '{cond}', verdict: good}}\n" + "".join(
        f"  - {{id: R{i}, when: *e, verdict: good}}\n" for i in range(1, 2000)
    )
    path = tmp_path / "alias_2000.yaml"
    path.write_text(base(rules))
    assert path.stat().st_size < 200_000
    start = time.perf_counter()
    assert main(["rules", "check", "--rulebase", str(path)]) == 2
    assert time.perf_counter() - start < 30
    err = capsys.readouterr().err
    assert "alias_2000.yaml" in err and "aliases (*name) expand the text past" in err
    # a few aliases of a short condition are fine, and load like the written-out text
    small = base("  - {id: A, when: &c refusal, verdict: good}\n  - {id: B, when: *c, verdict: bad}\n")
    written = base("  - {id: A, when: refusal, verdict: good}\n  - {id: B, when: refusal, verdict: bad}\n")
    assert parse_rulebase(small).hash == parse_rulebase(written).hash


def test_a_non_utf8_file_is_named(tmp_path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b"id: t\n# caf\xe9\nverdicts: {good: 1}\nrules:\n" + RULE.encode())
    with pytest.raises(RuleBaseError, match=r"latin1.yaml: not UTF-8 text \(line 2"):
        load_rulebase(path)
    assert main(["rules", "check", "--rulebase", str(path)]) == 2


def test_chain_of_2000_predicates_is_handled_without_recursion() -> None:
    preds = "  p0: refusal\n" + "".join(f"  p{i}: p{i - 1} and not partial\n" for i in range(1, 2000))
    rb = parse_rulebase(base("  - id: A\n    when: p1999\n    verdict: good\n", preds), "x.yaml")
    report = check_coverage(rb)
    # p1999 == refusal and not partial: a quarter of the assignments
    assert report.rule_counts["A"] == report.assignments // 4
    row = {a.name: False for a in rb.schema.attributes if a.kind == "bool"}
    row.update({a.name: a.values[0] for a in rb.schema.attributes if a.kind == "category"})
    assert apply_rules_row(rb, {**row, "refusal": True}) == (["A"], "good", False)


def test_doubling_predicates_compile_to_a_linear_dag(monkeypatch) -> None:
    sizes = {n: parse_rulebase(doubling(n)).program.size for n in (20, 21, 22, 24)}
    # Each level adds a constant number of distinct nodes (an 'or' and an 'and'), never doubles.
    assert sizes[21] - sizes[20] == sizes[22] - sizes[21] == 2
    assert sizes[24] == sizes[20] + 8

    rb = parse_rulebase(doubling(24))
    calls = []
    real = rules_compile._eval_node
    monkeypatch.setattr(rules_compile, "_eval_node", lambda *a: calls.append(1) or real(*a))
    cols, n = enumerate_assignments(rb)
    app = apply_rules(rb, cols, n)
    assert len(calls) == rb.program.size  # each distinct node evaluated exactly once
    # q_i == refusal for every i (absorption), so the rule fires exactly where refusal holds
    assert np.array_equal(app.applied[:, 0], cols["refusal"])


def test_shared_subexpressions_of_many_rules_are_evaluated_once(rulebase) -> None:
    rules = "".join(
        f"  - id: R{i}\n    when: topic == benign and refusal and partial\n    verdict: good\n"
        for i in range(1000)
    )
    rb = parse_rulebase(base(rules))
    # 1000 identical conditions: 3 leaves and one 'and', shared by every rule
    assert rb.program.size == 4
    report = check_coverage(rb)
    topics = len(rb.schema.attribute("topic").values)
    assert set(report.rule_counts.values()) == {report.assignments // topics // 4}
    assert not report.overlaps_complete and len(report.overlaps) == 1000
    assert report.overlaps[0].rules == ("R0", "R1") and report.overlaps[-1].rules == ("R1", "R2")
    # the packaged rule base shares 'sensitive' and friends across its rules
    assert rulebase.program.size < sum(len(str(r.when)) for r in rulebase.rules)


def test_cofiring_pairs_agree_on_both_paths(monkeypatch) -> None:
    rng = np.random.default_rng(0)
    m = rng.random((300, 40)) < 0.3
    co = m.T.astype(int) @ m.astype(int)
    want = [(i, j, int(co[i, j])) for i in range(40) for j in range(i + 1, 40) if co[i, j]]
    exact, done = cofiring_pairs(m, 10_000)
    assert exact == want and done
    import spl_hf.rules.coverage as cov

    monkeypatch.setattr(cov, "_PAIR_BUDGET", 0)  # force the dense block path
    dense, done = cofiring_pairs(m, 10_000)
    assert dense == want and done
    first, done = cofiring_pairs(m, 25)
    assert first == want[:25] and not done
    labels = np.arange(40) % 3
    conflicts, _ = cofiring_pairs(m, 10_000, labels)
    assert conflicts == [p for p in want if labels[p[0]] != labels[p[1]]]


def test_conflicts_are_counted_per_assignment(rulebase) -> None:
    text = (
        rulebase.to_yaml() + "- id: R10\n  when: topic == benign and refusal\n  verdict: helpful_compliance\n"
    )
    report = check_coverage(parse_rulebase(text))
    assert report.conflict_assignments == 256 and report.conflicts_complete
    assert check_coverage(rulebase).conflict_assignments == 0


def test_twenty_thousand_overlapping_rules_need_no_rules_by_rules_matrix() -> None:
    import tracemalloc

    rng = np.random.default_rng(1)
    m = rng.random((512, 20_000)) < 0.5  # every pair of rules co-fires somewhere
    tracemalloc.start()
    pairs, complete = cofiring_pairs(m, 1000)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert not complete and len(pairs) == 1000 and pairs[0][:2] == (0, 1)
    assert peak < 200 * 2**20  # a 20,000 x 20,000 count matrix alone would take 1.6 GB in float32
