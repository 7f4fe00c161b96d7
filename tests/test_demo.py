"""The demo end to end on the embedded model, run once per session (``demo_run`` in conftest) and rerun:
every step checks itself, and the rerun resumes from caches and finished stages."""

import json
import math
import re

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.model]


def test_demo_succeeds_and_audits_the_recorded_sample(demo_run):
    assert demo_run.code == 0, demo_run.output[-3000:]
    assert "216 rows audited, 216 reproduced, 0 mismatches" in demo_run.output
    assert re.search(r"\d+ of 144 pair labels would change under spl_table2_published_only", demo_run.output)


def test_demo_builds_both_releases_in_stages(demo_run):
    out = demo_run.output
    assert re.search(
        r"\[judge\] done in [\d.]+ s: pairs 12, tenets 6, scores 72, computed 72, cached 0, failed 0", out
    )
    assert re.search(r"\[decontaminate\] done in [\d.]+ s: rows_in 12, rows_kept 12", out)
    assert len(re.findall(r"\[audit\] done in [\d.]+ s: ok True", out)) == 2
    assert re.search(r"\[label\] done in [\d.]+ s: items 9, labels 9, malformed 0", out)
    assert re.search(r"\[verdict\] done in [\d.]+ s: candidates 6, judged 6, not_judged 0, malformed 0", out)
    assert re.search(
        r"\[audit\] done in [\d.]+ s: ok True, rows 3, reproduced 3, judge_rows 3, judge_reproduced 3", out
    )
    assert list((demo_run.out / "spl_release" / "dataset" / "judge_derivations").glob("*.parquet"))
    for rel in (
        "tenets_release/dataset/assignment_certificate.json",
        "tenets_release/run_report.json",
        "spl_release/dataset/rulebase.yaml",
        "spl_release/run_report.json",
    ):
        assert (demo_run.out / rel).is_file(), rel
    report = json.loads((demo_run.out / "tenets_release" / "run_report.json").read_text())
    assert [s["name"] for s in report["stages"]] == [
        "read",
        "decontaminate",
        "judge",
        "assign",
        "write",
        "audit",
    ]


def test_demo_publishes_loads_back_and_audits_by_repo_id(demo_run):
    out = demo_run.output
    assert out.count("identical to the local folder") == 3 and "DIFFERENT" not in out
    for name, rows in (("spl-sample", 216), ("tenets", 108)):
        assert re.search(
            rf"{name}: audited spl-hf-demo/{name}@[0-9a-f]{{12}} from the server: {rows} rows, {rows} reproduced",
            out,
        )
    assert re.search(
        r'load_dataset\("spl-hf-demo/tenets", "all", split="train", revision="[0-9a-f]{40}"\)', out
    )


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
    assert re.search(r"matcher: default \([0-9a-f]{12}\)", demo_run.output)
    assert (demo_run.out / "refusal.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_demo_rerun_resumes_and_changes_no_output(demo_run):
    assert demo_run.rerun_code == 0, demo_run.rerun_output[-3000:]
    again = demo_run.rerun_output
    for stage in (
        "read",
        "decontaminate",
        "judge",
        "assign",
        "write",
        "audit",
        "generate",
        "label",
        "verdict",
    ):
        assert f"[{stage}] finished earlier with the same inputs and settings: skipped" in again, stage
    assert "trained earlier on this build" in again
    assert demo_run.files_after == demo_run.files_before
