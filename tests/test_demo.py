"""The demo end to end on the embedded model, run once per session (``demo_run`` in conftest) and rerun:
every step checks itself, and the rerun resumes from caches and finished stages.

The assertions read what the demo wrote (run reports, audit records, metrics, the trained run); the
demo's exit code is 0 only if every step's own check held, including the published builds loading
back identical and auditing clean by repo id, which leave no file behind.
"""

import json
import math
import re

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.model]

TENET_STAGES = ["read", "decontaminate", "judge", "assign", "write", "audit"]
SPL_STAGES = ["prompts", "decontaminate", "generate", "label", "verdict", "write", "audit"]


def _stages(report: dict) -> dict[str, dict]:
    return {s["name"]: s for s in report["stages"]}


def _has(counts: dict, **expected) -> bool:
    return {k: counts.get(k) for k in expected} == expected


def test_demo_succeeds_and_audits_the_recorded_sample(demo_run):
    assert demo_run.code == 0, demo_run.output[-3000:]
    record = demo_run.reports_before["spl_audit.json"]
    assert _has(record["audit"], rows=216, reproduced=216, mismatch_count=0, counterfactual=False)
    cf = record["counterfactual"]
    assert cf["rulebase_id"] == "spl_table2_published_only" and cf["rows"] == 144 and cf["counterfactual"]
    assert 0 <= cf["changed_labels"] <= 144 and len(cf["changes"]) == cf["changed_labels"]


def test_demo_builds_both_releases_in_stages(demo_run):
    tenets = demo_run.reports_before["tenets_release/run_report.json"]
    spl = demo_run.reports_before["spl_release/run_report.json"]
    assert [s["name"] for s in tenets["stages"]] == TENET_STAGES
    assert [s["name"] for s in spl["stages"]] == SPL_STAGES
    assert not any(s["skipped"] for s in tenets["stages"] + spl["stages"])
    t, s = _stages(tenets), _stages(spl)
    assert _has(t["judge"]["counts"], pairs=12, tenets=6, scores=72, computed=72, cached=0, failed=0)
    assert _has(t["decontaminate"]["counts"], rows_in=12, rows_kept=12)
    assert t["audit"]["counts"]["ok"] is True and s["audit"]["counts"]["ok"] is True
    assert _has(s["label"]["counts"], items=9, labels=9, malformed=0)
    assert _has(s["verdict"]["counts"], candidates=6, judged=6, not_judged=0, malformed=0)
    assert _has(s["audit"]["counts"], rows=3, reproduced=3, judge_rows=3, judge_reproduced=3)
    assert list((demo_run.out / "spl_release" / "dataset" / "judge_derivations").glob("*.parquet"))
    for rel in (
        "tenets_release/dataset/assignment_certificate.json",
        "spl_release/dataset/rulebase.yaml",
    ):
        assert (demo_run.out / rel).is_file(), rel


def test_demo_publishes_loads_back_and_audits_by_repo_id(demo_run):
    # The one check on log text: the three published builds, loaded back in fresh processes.
    assert demo_run.output.count("identical to the local folder") == 3 and "DIFFERENT" not in demo_run.output
    stamp = demo_run.reports_before["train_stamp.json"]
    assert stamp["dataset"] == "spl-hf-demo/tenets" and stamp["config"] == "all" and stamp["split"] == "train"


def test_demo_trains_from_the_server_and_measures_refusal(demo_run):
    run = demo_run.out / "train_run"
    record = json.loads((run / "run.json").read_text())
    assert record["dataset_name"] == "spl-hf-demo/tenets" and re.fullmatch(
        r"[0-9a-f]{40}", record["dataset_revision"]
    )
    assert math.isfinite(record["final_loss"]) and record["rows"] == 12
    assert (run / "adapter_model.safetensors").is_file() and (run / "README.md").is_file()
    for policy in ("base", "adapter"):
        for prompt_set in ("or_bench_hard_1k", "or_bench_toxic"):
            metrics = json.loads((demo_run.out / "eval" / policy / prompt_set / "metrics.json").read_text())
            assert metrics["n"] == 4 and 0.0 <= metrics["refusal_rate"] <= 1.0
            assert metrics["matcher"] == "default" and re.fullmatch(r"[0-9a-f]{64}", metrics["matcher_hash"])
    assert (demo_run.out / "refusal.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_demo_rerun_resumes_and_changes_no_output(demo_run):
    assert demo_run.rerun_code == 0, demo_run.rerun_output[-3000:]
    for rel in ("tenets_release/run_report.json", "spl_release/run_report.json"):
        before, after = demo_run.reports_before[rel], demo_run.reports_after[rel]
        assert [s["name"] for s in after["stages"]] == [s["name"] for s in before["stages"]]
        assert all(s["skipped"] for s in after["stages"]), rel
        assert [s["counts"] for s in after["stages"]] == [s["counts"] for s in before["stages"]]
    assert demo_run.trained_after == demo_run.trained_before != 0  # not trained again
    assert demo_run.files_after == demo_run.files_before
