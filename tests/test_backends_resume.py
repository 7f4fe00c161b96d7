"""A judge run killed with SIGKILL and started again recomputes nothing and ends where a full run ends."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from spl_hf.cli import main as cli_main
from tests import procs
from tests.backends_rows import pair_row, write_jsonl
from tests.conftest import REPO

N_PAIRS, TENETS = 150, "no_preachy_tone,calibrated_caveats,upfront_concerns,harm_reduction_guidance"
TOTAL = N_PAIRS * 4


def _count(folder: Path) -> int:
    """Items in the finished shards under a results folder (every stage kind)."""
    import pyarrow.parquet as pq

    return sum(pq.read_metadata(f).num_rows for f in folder.glob("*/*.parquet") if not f.name.startswith("."))


@pytest.mark.slow
def test_sigkill_mid_run_then_resume_matches_uninterrupted(
    tiny_model_dir: Path, tmp_path: Path, capsys
) -> None:
    pairs = write_jsonl(tmp_path / "pairs.jsonl", [pair_row(i) for i in range(N_PAIRS)])

    def argv(db: Path, out: Path) -> list[str]:
        return [
            "judge",
            "--pairs",
            str(pairs),
            "--tenets",
            TENETS,
            "--model",
            str(tiny_model_dir),
            "--cache",
            str(db),
            "--output_dir",
            str(out),
            "--json",
            "--no_progress",
        ]

    # Reference: one uninterrupted run.
    assert cli_main(argv(tmp_path / "ref.db", tmp_path / "ref.jsonl")) == 0
    per_pair = json.loads(capsys.readouterr().out)["forward_calls"] / N_PAIRS
    # Per pair and ordering: one prefix pass, then one packed pass per chunk of tenet questions.
    assert per_pair >= 4 and per_pair == int(per_pair)

    db, out = tmp_path / "run.db", tmp_path / "run.jsonl"
    code = "import sys; from spl_hf.cli import main; sys.exit(main(sys.argv[1:]))"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    with procs.started(
        [sys.executable, "-c", code, *argv(db, out)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    ) as proc:
        deadline = time.monotonic() + 120
        while _count(db) < 40 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    done_at_kill = _count(db)
    assert proc.returncode == -signal.SIGKILL
    assert 0 < done_at_kill < TOTAL, "the kill must land mid-run"
    assert not out.exists()

    assert done_at_kill % 4 == 0  # a pair's tenets share a shard: no half-written pair

    assert cli_main(argv(db, out)) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["cached"] == done_at_kill
    assert summary["computed"] == TOTAL - done_at_kill
    # Model work only for the unfinished pairs.
    assert summary["forward_calls"] == (TOTAL - done_at_kill) // 4 * per_pair
    assert _count(db) == TOTAL
    assert out.read_bytes() == (tmp_path / "ref.jsonl").read_bytes()


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


@pytest.mark.slow
@pytest.mark.model
def test_demo_release_judge_killed_and_resumed_writes_the_same_manifest(tmp_path: Path) -> None:
    """The demo recipe's judge stage SIGKILLed part-way and resumed gives the uninterrupted run's bytes."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    _run_release(_release_argv(tmp_path / "ref"), env)
    reference = (tmp_path / "ref" / "ds" / "MANIFEST.sha256").read_bytes()

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


@pytest.mark.slow
@pytest.mark.parametrize(
    ("command", "flag", "extra", "kill_at"),
    [
        ("label", "--items", [], 10),
        ("generate", "--prompts", ["--max_new_tokens", "8"], 6),
    ],
)
def test_label_and_generate_killed_and_resumed_write_the_uninterrupted_bytes(
    command: str, flag: str, extra: list[str], kill_at: int, tiny_model_dir: Path, tmp_path: Path, capsys
) -> None:
    rows = write_jsonl(tmp_path / "rows.jsonl", [pair_row(i) for i in range(40)])

    def argv(db: Path, out: Path) -> list[str]:
        head = [
            command,
            flag,
            str(rows),
            "--model",
            str(tiny_model_dir),
            "--cache",
            str(db),
            "--output_dir",
            str(out),
        ]
        return [*head, *extra, "--json", "--no_progress"]

    assert cli_main(argv(tmp_path / "ref.db", tmp_path / "ref.jsonl")) == 0
    total = json.loads(capsys.readouterr().out)["computed"]
    db, out = tmp_path / "run.db", tmp_path / "run.jsonl"
    code = "import sys; from spl_hf.cli import main; sys.exit(main(sys.argv[1:]))"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with procs.started(
        [sys.executable, "-c", code, *argv(db, out)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    ) as proc:
        deadline = time.monotonic() + 300
        while _count(db) < kill_at and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    done_at_kill = _count(db)
    assert proc.returncode == -signal.SIGKILL and 0 < done_at_kill < total
    assert cli_main(argv(db, out)) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["cached"] == done_at_kill and summary["computed"] == total - done_at_kill
    assert out.read_bytes() == (tmp_path / "ref.jsonl").read_bytes()
