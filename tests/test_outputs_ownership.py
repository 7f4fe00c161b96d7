"""`--overwrite` replaces only what spl_hf wrote: every command that writes a folder, run onto its own
earlier output holding a user's file, refuses (exit 2), names the file and deletes nothing; records,
reports, cards and manifests are never written through a symlink; a hand-made marker proves nothing."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from spl_hf.cli import main
from spl_hf.outputs import MARKER, OutputError, guard_dir, mark_output, owned_by_spl_hf, seal_output
from tests.audit_fixtures import tenet_inputs
from tests.conftest import REPO

FIXTURES = REPO / "tests" / "fixtures" / "sources"
NOTES = "MY_NOTES.txt"


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def _sources_read(tmp: Path, out: Path) -> list[str]:
    return [
        "sources",
        "read",
        "--source",
        "xstest",
        "--path",
        str(FIXTURES / "xstest.jsonl"),
        "--output_dir",
        str(out),
    ]


def _derive(tmp: Path, out: Path) -> list[str]:
    return ["derive", "--output_dir", str(out)]


def _tenets_build(tmp: Path, out: Path) -> list[str]:
    if not (tmp / "pairs.parquet").is_file():
        tenet_inputs(tmp)
    pairs, scores = tmp / "pairs.parquet", tmp / "scores.parquet"
    build = ["tenets", "build", "--pairs", str(pairs), "--scores", str(scores), "--capacity", "2"]
    return [*build, "--threshold", "0.3", "--output_dir", str(out)]


def _release_spl(tmp: Path, out: Path) -> list[str]:
    recipe = str(REPO / "recipes" / "spl" / "sample.yaml")
    return ["release", "spl", "--config", recipe, "--run_dir", str(tmp / "run"), "--output_dir", str(out)]


def _report_seeds(tmp: Path, out: Path) -> list[str]:
    from spl_hf.demo.sample_runs import write_illustrative_runs

    runs = tmp / "runs"
    if not runs.is_dir():
        write_illustrative_runs(runs)
    return ["report", "seeds", str(runs), "--output_dir", str(out), "--no_figures"]


def _report_judge(tmp: Path, out: Path) -> list[str]:
    from spl_hf.build import SPLBuildConfig, build_spl
    from spl_hf.report.judge_comparison import read_derivations
    from tests.test_report_judge import judge_rows, write_jsonl

    built, verdicts = tmp / "built", tmp / "judge.jsonl"
    if not built.is_dir():
        build_spl(SPLBuildConfig(output_dir=str(built)))
        write_jsonl(verdicts, judge_rows(read_derivations(built)))
    return ["report", "judge", str(built), "--verdicts", str(verdicts), "--output_dir", str(out)]


COMMANDS: dict[str, Callable[[Path, Path], list[str]]] = {
    "derive": _derive,
    "tenets build": _tenets_build,
    "sources read": _sources_read,
    "release spl": _release_spl,
    "report seeds": _report_seeds,
    "report judge": _report_judge,
}


@pytest.mark.parametrize("name", list(COMMANDS))
def test_overwrite_onto_its_own_output_holding_a_users_file_is_refused_and_names_it(name, tmp_path, capsys):
    out = tmp_path / "out"
    argv = COMMANDS[name](tmp_path, out)
    assert main(argv) == 0
    assert owned_by_spl_hf(out)  # the earlier output is provably the program's ...
    assert main([*argv, "--overwrite"]) == 0  # ... so --overwrite replaces it
    (out / NOTES).write_text("my thesis notes")
    before = _tree(out)
    capsys.readouterr()
    assert main([*argv, "--overwrite"]) == 2
    err = capsys.readouterr().err
    assert NOTES in err and "did not write" in err
    assert _tree(out) == before and (out / NOTES).read_text() == "my thesis notes"


def test_cross_command_overwrites_keep_a_users_file(tmp_path, capsys):
    """The review's repros: derive onto a sources-read output, a release onto one, derive onto the demo folder."""
    read = tmp_path / "read"
    assert main(_sources_read(tmp_path, read)) == 0
    (read / NOTES).write_text("mine")
    (read / "mydir").mkdir()
    (read / "mydir" / "f.txt").write_text("mine too")
    before = _tree(read)
    assert main([*_derive(tmp_path, read), "--overwrite"]) == 2
    assert main([*_release_spl(tmp_path, read), "--overwrite"]) == 2
    assert "mydir/f.txt" in capsys.readouterr().err
    assert _tree(read) == before

    demo = tmp_path / "demo"  # what the demo leaves: its marker, a build inside, files of its own
    mark_output(demo, "demo")
    assert main(_derive(tmp_path, demo / "spl")) == 0
    (demo / "run_report.json").write_text("{}\n")
    seal_output(demo)
    assert owned_by_spl_hf(demo)
    (demo / "MY_THESIS_NOTES.md").write_text("notes")
    before = _tree(demo)
    capsys.readouterr()
    assert main([*_derive(tmp_path, demo), "--overwrite"]) == 2
    assert "MY_THESIS_NOTES.md" in capsys.readouterr().err and _tree(demo) == before


def test_train_run_and_eval_sets_refuse_before_any_model(tmp_path, built_spl, capsys):
    from spl_hf.evaluation import plan_outputs
    from spl_hf.evaluation.job import write_set
    from spl_hf.train.entry import cli

    run = tmp_path / "run"  # what a finished train run leaves: its files, sealed
    mark_output(run, "train-run")
    (run / "adapter_model.safetensors").write_bytes(b"weights")
    (run / "run.json").write_text("{}\n")
    seal_output(run)
    (run / NOTES).write_text("mine")
    before = _tree(run)
    flags = ["--config", "recipes/train/demo_cpu.yaml", "--dataset_name", str(built_spl)]
    assert cli([*flags, "--output_dir", str(run), "--overwrite", "true"]) == 2
    assert NOTES in capsys.readouterr().err and _tree(run) == before

    evals = tmp_path / "eval"
    write_set(evals / "xstest", [{"prompt_id": "p", "response": "r"}], [], {"n": 1})
    assert plan_outputs(evals, ["xstest"], overwrite=True)  # its own output: replaceable
    (evals / "xstest" / NOTES).write_text("mine")
    with pytest.raises(OutputError, match=NOTES):
        plan_outputs(evals, ["xstest"], overwrite=True)
    assert (evals / "xstest" / NOTES).read_text() == "mine"


def test_sample_runs_and_sweeps_keep_a_users_file(tmp_path):
    from spl_hf.demo.sample_runs import write_illustrative_runs
    from spl_hf.train.sweep import Condition, prepare_root

    runs = write_illustrative_runs(tmp_path / "runs")
    write_illustrative_runs(runs, overwrite=True)
    (runs / "judge" / NOTES).write_text("mine")
    with pytest.raises(OutputError, match=f"judge/{NOTES}"):
        write_illustrative_runs(runs, overwrite=True)
    assert (runs / "judge" / NOTES).read_text() == "mine"

    recipe = tmp_path / "recipe.yaml"
    recipe.write_text("x: 1\n")
    root = prepare_root(tmp_path / "sweep", str(recipe), [1], [Condition("a", "default")])
    (root / NOTES).write_text("mine")
    prepare_root(root, str(recipe), [1, 2], [Condition("a", "default")])  # resuming deletes nothing ...
    assert not owned_by_spl_hf(root)  # ... and never claims the user's file
    with pytest.raises(OutputError, match=NOTES):
        guard_dir(root, overwrite=True)


def test_a_hand_made_or_edited_marker_proves_nothing(tmp_path, capsys):
    user = tmp_path / "user"
    user.mkdir()
    (user / "report.json").write_text("my report")
    (user / MARKER).write_text(json.dumps({"created_by": "spl_hf", "kind": "sources read"}))
    argv = [*_sources_read(tmp_path, user), "--overwrite"]
    assert main(argv) == 2
    assert "report.json" in capsys.readouterr().err and (user / "report.json").read_text() == "my report"
    # A record listing the file, but not with its content, proves nothing either.
    fake = {"created_by": "spl_hf", "kind": "sources read", "files": {"report.json": "0" * 64}, "folders": []}
    (user / MARKER).write_text(json.dumps(fake))
    assert main(argv) == 2
    assert "report.json (changed since spl_hf wrote it)" in capsys.readouterr().err
    assert (user / "report.json").read_text() == "my report"


def test_an_edited_file_in_a_sealed_output_is_refused(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(_sources_read(tmp_path, out)) == 0
    (out / "report.json").write_text("annotated by hand")
    assert main([*_sources_read(tmp_path, out), "--overwrite"]) == 2
    assert "report.json (changed since" in capsys.readouterr().err
    assert (out / "report.json").read_text() == "annotated by hand"


@pytest.mark.parametrize("name", ["report.json", MARKER])
def test_sources_read_never_writes_through_a_symlink(name, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(_sources_read(tmp_path, out)) == 0
    target = tmp_path / "USER_FILE.txt"
    target.write_text("user data")
    (out / name).unlink()
    (out / name).symlink_to(target)
    assert main([*_sources_read(tmp_path, out), "--overwrite"]) == 2
    assert name in capsys.readouterr().err
    assert target.read_text() == "user data" and (out / name).is_symlink()


@pytest.mark.parametrize("name", ["README.md", "MANIFEST.sha256"])
def test_card_refuses_a_symlinked_readme_or_manifest(name, tmp_path, capsys):
    build = tmp_path / "b"
    assert main(_derive(tmp_path, build)) == 0
    target = tmp_path / f"USER_{name}"
    target.write_text("MY OWN FILE")
    (build / name).unlink()
    (build / name).symlink_to(target)
    before = _tree(build)
    assert main(["card", str(build), "--repo_id", "x/y"]) == 2
    assert "symlink" in capsys.readouterr().err
    assert target.read_text() == "MY OWN FILE" and _tree(build) == before


def test_a_file_output_that_is_a_symlink_is_refused_before_any_work(tmp_path, capsys):
    from spl_hf.outputs import guard_file

    target = tmp_path / "USER_FILE.txt"
    target.write_text("user data")
    link = tmp_path / "labels.jsonl"
    link.symlink_to(target)
    with pytest.raises(OutputError, match="symlink"):
        guard_file(link, overwrite=True)
    scores = tmp_path / "scores.jsonl"
    scores.write_text('{"pair_id": "p", "tenet": "t", "score": 0.5}\n')
    assert (
        main(["assign", "--scores", str(scores), "--capacity", "1", "--output_dir", str(link), "--overwrite"])
        == 2
    )
    assert "symlink" in capsys.readouterr().err and target.read_text() == "user data"
