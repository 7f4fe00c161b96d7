"""`spl-hf train sweep`: layout runs/<condition>/seed<k>/, resume by skipping finished runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import REPO

RECIPE = str(REPO / "recipes" / "train" / "demo_cpu.yaml")


class Recorder:
    """Stands in for the subprocess: parses each command exactly as train.py would, then records
    a finished run (or fails the ones listed)."""

    def __init__(self, fail: set[str] = frozenset()):
        self.calls: list[list[str]] = []
        self.fail = fail

    def __call__(self, argv: list[str]) -> int:
        from spl_hf.train.args import parse_args

        self.calls.append(argv)
        i = argv.index("spl_hf.train")
        script, train, _ = parse_args([*argv[i + 1 :], "--use_cpu", "true"])
        out = Path(train.output_dir)
        if out.name in self.fail:
            out.mkdir(parents=True, exist_ok=True)
            (out / ".spl_hf-output.json").write_text("{}")
            return 1
        out.mkdir(parents=True, exist_ok=True)
        (out / "run.json").write_text(
            json.dumps({"seed": train.seed, "dataset_config": script.dataset_config})
        )
        return 0


def test_parse_seeds_and_conditions():
    from spl_hf.train.sweep import Condition, parse_conditions, parse_seeds

    assert parse_seeds([1, 2, 3, 4, 5]) == [1, 2, 3, 4, 5]
    assert parse_conditions(["spl=preferences", " judge=all"]) == [
        Condition("spl", "preferences"),
        Condition("judge", "all"),
    ]
    for bad in ([1, 1], ["a"], []):
        with pytest.raises(ValueError, match="--seeds"):
            parse_seeds(bad)
    for bad in (["spl"], ["spl="], ["../x=all"], ["a=x", "a=y"]):
        with pytest.raises(ValueError, match="--conditions"):
            parse_conditions(bad)


def test_layout_and_resume(tmp_path):
    from spl_hf.train.sweep import parse_conditions, plan, prepare_root, run_sweep

    root = tmp_path / "runs"
    conds = parse_conditions(["spl=preferences", "tenet=all"])
    runs = plan(RECIPE, [1, 2], conds, root, ["--dataset_name", "ds"])
    prepare_root(root, RECIPE, [1, 2], conds)
    first = Recorder(fail={"seed2"})
    report = run_sweep(runs, first, progress=False)
    assert sorted(p.relative_to(root).as_posix() for p in report.ran) == ["spl/seed1", "tenet/seed1"]
    assert [p.relative_to(root).as_posix() for p, _ in report.failed] == ["spl/seed2", "tenet/seed2"]
    rec = json.loads((root / "tenet" / "seed1" / "run.json").read_text())
    assert rec == {"seed": 1, "dataset_config": "all"}

    # Resume: finished runs are skipped; interrupted ones rerun with --overwrite (still guarded by train.py).
    again = Recorder()
    prepare_root(root, RECIPE, [1, 2], conds)
    report = run_sweep(runs, again, progress=False)
    assert len(report.skipped) == 2 and len(report.ran) == 2 and not report.failed
    assert [c[c.index("--output_dir") + 1] for c in again.calls] == [
        str(root / "spl" / "seed2"),
        str(root / "tenet" / "seed2"),
    ]
    assert all(c[-2:] == ["--overwrite", "true"] for c in again.calls)
    assert json.loads((root / "sweep.json").read_text())["conditions"] == {
        "spl": "preferences",
        "tenet": "all",
    }


def test_root_guard(tmp_path):
    from spl_hf.outputs import OutputError
    from spl_hf.train.sweep import parse_conditions, prepare_root

    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "thesis.tex").write_text("x")
    with pytest.raises(OutputError, match="not an spl_hf sweep"):
        prepare_root(foreign, RECIPE, [1], parse_conditions(["a=x"]))
    root = tmp_path / "runs"
    prepare_root(root, RECIPE, [1], parse_conditions(["a=x"]))
    with pytest.raises(OutputError, match="other configs"):
        prepare_root(root, RECIPE, [1], parse_conditions(["a=y"]))


def test_cli_dry_run_and_accelerate_launcher(capsys):
    from spl_hf.cli import main

    rc = main(
        [
            "train",
            "sweep",
            "--recipe",
            RECIPE,
            "--seeds",
            "1",
            "2",
            "--conditions",
            "a=preferences",
            "--output_dir",
            "runs",
            "--accelerate_config",
            "recipes/accelerate/multi_gpu.yaml",
            "--dry_run",
            "--",
            "--max_steps",
            "3",
        ]
    )
    lines = capsys.readouterr().out.strip().splitlines()
    assert rc == 0 and len(lines) == 2
    assert (
        "accelerate.commands.launch --config_file recipes/accelerate/multi_gpu.yaml -m spl_hf.train"
        in lines[0]
    )
    assert lines[1].endswith("--seed 2 --output_dir runs/a/seed2 --max_steps 3")


def test_cli_bad_conditions_exit_2(capsys):
    from spl_hf.cli import main

    assert main(["train", "sweep", "--recipe", RECIPE, "--seeds", "1", "--conditions", "oops"]) == 2
    assert "NAME=CONFIG" in capsys.readouterr().err
