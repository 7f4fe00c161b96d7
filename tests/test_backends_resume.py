"""A judge run killed (SIGKILL) or interrupted (Ctrl-C, SIGTERM) and started again recomputes nothing it
had finished, down to the engine call, and ends where a full run ends."""

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


def _shard_items(folder: Path) -> int:
    """Items in the finished shards under a results folder (every stage kind)."""
    import pyarrow.parquet as pq

    return sum(pq.read_metadata(f).num_rows for f in folder.glob("*/*.parquet") if not f.name.startswith("."))


def _count(folder: Path) -> int:
    """Items kept under a results folder: finished shards and the journals of unfinished ones."""
    return _shard_items(folder) + _journaled(folder)


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


def _journaled(folder: Path) -> int:
    """Items in the shard-local journals of unfinished shards under a results folder."""
    return sum(f.read_bytes().count(b"\n") for f in folder.glob("*/.*.journal"))


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["sigint", "sigterm"])
def test_an_interrupt_inside_the_first_shard_keeps_its_finished_pairs(
    sig: int, tiny_model_dir: Path, tmp_path: Path, capsys
) -> None:
    """Ctrl-C or SIGTERM: one line, exit 128 + signal, no partial file; the rerun gives the same bytes."""
    from tests import procs

    n_pairs = 30
    pairs = write_jsonl(tmp_path / "pairs.jsonl", [pair_row(i) for i in range(n_pairs)])

    def argv(db: Path, out: Path) -> list[str]:
        files = ["--pairs", str(pairs), "--model", str(tiny_model_dir), "--cache", str(db)]
        # One shard for all pairs: before journals, an interrupt anywhere in it lost everything.
        return ["judge", *files, "--tenets", TENETS, "--output_dir", str(out), "--shard_groups", "64"]

    assert cli_main([*argv(tmp_path / "ref", tmp_path / "ref.jsonl"), "--no_progress"]) == 0
    capsys.readouterr()
    db, out = tmp_path / "run", tmp_path / "run.jsonl"
    # Ctrl-C as at a terminal: a process started in the background inherits SIGINT ignored.
    code = "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
    code += "from spl_hf.cli import main; sys.exit(main(sys.argv[1:]))"
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-c", code, *argv(db, out), "--no_progress"]
    with procs.started(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) as proc:
        deadline = time.monotonic() + 300
        while _journaled(db) < 8 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert proc.poll() is None, "the run ended before the signal"
        proc.send_signal(sig)
        err = proc.communicate(timeout=120)[1]
    kept = _journaled(db)
    assert proc.returncode == 128 + sig, err[-2000:]
    assert 8 <= kept < n_pairs * 4 and kept % 4 == 0  # whole pairs: one engine call each
    assert (
        err.strip().splitlines()[-1]
        == f"spl-hf judge: interrupted: {kept} of {n_pairs * 4} kept; rerun to resume"
    )
    assert "Traceback" not in err
    assert not out.exists() and not list(tmp_path.rglob("*.partial")) and _shard_items(db) == 0

    assert cli_main([*argv(db, out), "--json", "--no_progress"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert (summary["cached"], summary["computed"]) == (kept, n_pairs * 4 - kept)
    assert out.read_bytes() == (tmp_path / "ref.jsonl").read_bytes()
    assert _journaled(db) == 0 and {p.name for p in (db / "judge").iterdir()} == {
        p.name for p in (tmp_path / "ref" / "judge").iterdir()
    }
