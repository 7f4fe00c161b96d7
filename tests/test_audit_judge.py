"""The verdict-judge row audit: every judge verdict, rank, label, digest and message recomputed from the
stored probabilities."""

import json

from spl_hf.cli import main
from tests.conftest import edit_first_file
from tests.test_audit_spl import _audit


def test_a_changed_judge_label_is_caught_and_named(judge_copy, capsys):
    def flip(rows):
        j = next(r for r in rows if r["judge"]["label"] is not None)["judge"]
        j["label"] = "b" if j["label"] == "a" else "a"

    edit_first_file(judge_copy, "judge_derivations", flip)
    result = _audit(judge_copy)
    assert not result.ok and result.judge.mismatch_count == 1
    assert "judge.label" in result.judge.mismatches[0].fields
    assert main(["audit", str(judge_copy), "--no_manifest", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert [m["config"] for m in out["mismatches"]] == ["judge_derivations"]


def test_edited_probabilities_fail_the_digest(judge_copy):
    def shift(rows):
        row = next(r for r in rows if r["judge"]["probs_a"] is not None)
        row["judge"]["probs_a"] = [p * 0.5 for p in row["judge"]["probs_a"]]

    edit_first_file(judge_copy, "judge_derivations", shift)
    result = _audit(judge_copy)
    assert result.judge.mismatch_count == 1 and "judge.judge_digest" in result.judge.mismatches[0].fields


def test_messages_of_common_support_judge_must_follow_the_judge(judge_copy):
    def swap(rows):
        rows[0]["chosen"], rows[0]["rejected"] = rows[0]["rejected"], rows[0]["chosen"]

    edit_first_file(judge_copy, "common_support_judge", swap)
    result = _audit(judge_copy)
    assert result.judge.mismatch_count == 1
    assert set(result.judge.mismatches[0].fields) == {"chosen", "rejected"}
    assert result.rules.ok  # the rule audit leaves this config's messages to the judge audit
