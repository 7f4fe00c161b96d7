"""The demo end to end on the embedded model, run once per session (``demo_run`` in conftest) and rerun:
every step checks itself, and the rerun resumes from caches and finished stages.

The assertions read what the demo wrote (run reports, audit records, metrics, the trained run); the
demo's exit code is 0 only if every step's own check held, including the published builds loading
back identical and auditing clean by repo id, which leave no file behind.
"""

import json
import math
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import procs
from tests.conftest import REPO
from tests.test_backends_resume import _count

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


def test_demo_publishes_an_spl_release_with_labels_and_says_they_are_recorded(demo_run):
    # The 135M labeler labels none of the model release's pairs (and that release is not published);
    # the SPL release the demo publishes is the same staged command on the sample's recorded labels.
    model = _stages(demo_run.reports_before["spl_release/run_report.json"])
    assert _has(model["write"]["counts"], pairs=3, labeled=0)
    recorded = demo_run.reports_before["spl_recorded_release/run_report.json"]
    stages = _stages(recorded)
    assert list(stages) == ["write", "audit"] and stages["audit"]["counts"]["ok"] is True
    assert stages["write"]["counts"]["labeled"] > 0
    dataset = demo_run.out / "spl_recorded_release" / "dataset"
    card = (dataset / "README.md").read_text()
    assert "recorded labels of the shipped sample, not labeled by a model in this run" in card
    producers = json.loads((dataset / "build_report.json").read_text())["producers"]
    assert producers["labeler"]["status"] == "not_recorded" and not producers["labeler"]["identities"]
    assert "spl-hf-demo/spl-safety" in demo_run.output


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
    for rel in (
        "tenets_release/run_report.json",
        "spl_release/run_report.json",
        "spl_recorded_release/run_report.json",
    ):
        before, after = demo_run.reports_before[rel], demo_run.reports_after[rel]
        assert [s["name"] for s in after["stages"]] == [s["name"] for s in before["stages"]]
        assert all(s["skipped"] for s in after["stages"]), rel
        assert [s["counts"] for s in after["stages"]] == [s["counts"] for s in before["stages"]]
    assert demo_run.trained_after == demo_run.trained_before != 0  # not trained again
    assert demo_run.files_after == demo_run.files_before


def _release_argv(root: Path) -> list[str]:
    return [
        "release",
        "tenets",
        "--config",
        str(REPO / "recipes" / "tenets" / "demo.yaml"),
        "--run_dir",
        str(root / "run"),
        "--output_dir",
        str(root / "ds"),
        "--no_progress",
        "--shard_groups",
        "2",
    ]


def _run_release(argv: list[str], env: dict[str, str]) -> None:
    proc = procs.run(
        [sys.executable, "-m", "spl_hf.cli", *argv], env=env, capture_output=True, text=True, timeout=900
    )
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_demo_release_judge_killed_and_resumed_writes_the_demos_manifest(demo_run, tmp_path):
    """The demo recipe's judge stage SIGKILLed part-way and resumed, in two shard groups, gives the bytes of
    the demo's own uninterrupted run (one group, in process): the demo is the reference, not run again."""
    reference = demo_run.files_before["tenets_release/dataset/MANIFEST.sha256"]
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    root = tmp_path / "killed"
    db = root / "run" / "results"
    with procs.started(
        [sys.executable, "-m", "spl_hf.cli", *_release_argv(root)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    ) as proc:
        deadline = time.monotonic() + 600
        while _count(db) < 12 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    done_at_kill = _count(db)
    assert proc.returncode == -signal.SIGKILL
    assert 0 < done_at_kill < 72, "the kill must land inside the judge stage (12 pairs x 6 tenets, 6 shards)"
    assert not (root / "ds" / "MANIFEST.sha256").exists()

    _run_release(_release_argv(root), env)
    report = json.loads((root / "run" / "run_report.json").read_text())
    judge = next(s for s in report["stages"] if s["name"] == "judge")["counts"]
    assert judge["cached"] == done_at_kill and judge["computed"] == 72 - done_at_kill
    assert (root / "ds" / "MANIFEST.sha256").read_bytes() == reference
