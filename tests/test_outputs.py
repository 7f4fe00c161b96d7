"""Outputs never destroy what spl_hf did not write: the guards, and the dataset folder writer."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pyarrow as pa
import pytest
from datasets import Features, Value

from spl_hf.dataset import folder as folder_mod
from spl_hf.dataset.folder import ConfigData, write_dataset_folder
from spl_hf.manifest import MANIFEST, verify_manifest
from spl_hf.outputs import MARKER, OutputError, guard_dir, guard_file, mark_output, owned_by_spl_hf
from tests import procs

FEATURES = Features({"x": Value("int64"), "text": Value("string")})


def configs(n: int = 3) -> list[ConfigData]:
    table = pa.table({"x": list(range(n)), "text": [f"row {i}" for i in range(n)]})
    return [ConfigData("default", FEATURES, {"train": table}, default=True)]


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    """Bytes and mtime of every file under root (to prove nothing was touched)."""
    return {
        p.relative_to(root).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def temps(out: Path) -> list[str]:
    return sorted(p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}."))


def _dead_pid() -> int:
    with procs.started([sys.executable, "-c", "pass"]) as proc:
        proc.wait()
    return proc.pid


@pytest.fixture
def umask022():
    old = os.umask(0o022)
    yield
    os.umask(old)


# --- guard_dir / guard_file -------------------------------------------------------------------


def test_new_and_empty_folders_pass(tmp_path):
    assert guard_dir(tmp_path / "new" / "deeper") == (tmp_path / "new" / "deeper").resolve()
    (tmp_path / "empty").mkdir()
    guard_dir(tmp_path / "empty")


def test_user_files_and_git_repos_are_refused_even_with_overwrite(tmp_path):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("my notes")
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    with pytest.raises(OutputError, match=r"did not write \(notes.txt\)"):
        guard_dir(tmp_path / "mine", overwrite=True)
    with pytest.raises(OutputError, match=r"\.git"):
        guard_dir(tmp_path / "repo", overwrite=True)


def test_dangerous_places_are_refused(tmp_path, monkeypatch):
    work = tmp_path / "project" / "sub"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    for place in (".", "..", str(tmp_path), "/"):
        with pytest.raises(OutputError, match="refusing"):
            guard_dir(place, overwrite=True)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    with pytest.raises(OutputError, match="home folder"):
        guard_dir(home, overwrite=True)


def test_inputs_inside_or_equal_to_the_output_are_refused(tmp_path):
    data = tmp_path / "in" / "prompts.jsonl"
    data.parent.mkdir()
    data.write_text("{}\n")
    with pytest.raises(OutputError, match="holds an input"):
        guard_dir(tmp_path / "in", inputs=[data])
    with pytest.raises(OutputError, match="holds an input"):
        guard_dir(tmp_path, inputs=[data])  # a parent of the input
    with pytest.raises(OutputError, match="also an input"):
        guard_file(data, overwrite=True, inputs=[data])
    link = tmp_path / "link.jsonl"
    link.symlink_to(data)
    with pytest.raises(OutputError, match="also an input"):
        guard_file(link, overwrite=True, inputs=[data])


def test_files_need_overwrite_and_a_folder_to_live_in(tmp_path):
    out = tmp_path / "out.jsonl"
    guard_file(out)
    out.write_text("x")
    with pytest.raises(OutputError, match="--overwrite"):
        guard_file(out)
    guard_file(out, overwrite=True)
    with pytest.raises(OutputError, match="is a folder"):
        guard_file(tmp_path)
    with pytest.raises(OutputError, match="which is a file"):
        guard_file(out / "under.jsonl")
    with pytest.raises(OutputError, match="not a folder"):
        guard_dir(out)


def test_unwritable_folder_is_refused(tmp_path, monkeypatch):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    if os.geteuid() == 0:  # root may write anywhere: let os.access answer as for another user
        monkeypatch.setattr("spl_hf.outputs.os.access", lambda path, mode: Path(path) != locked)
    try:
        with pytest.raises(OutputError, match="not writable"):
            guard_file(locked / "x.jsonl")
        with pytest.raises(OutputError, match="not writable"):
            guard_dir(locked / "ds")
    finally:
        locked.chmod(0o755)


def test_owned_folders_need_overwrite(tmp_path):
    out = tmp_path / "ds"
    write_dataset_folder(out, configs(), "# card\n")
    assert owned_by_spl_hf(out)
    with pytest.raises(OutputError, match="--overwrite"):
        guard_dir(out)
    guard_dir(out, overwrite=True)
    (out / "extra.txt").write_text("added by a user")  # no longer only ours
    assert not owned_by_spl_hf(out)
    mark_output(tmp_path / "marked", "demo")
    assert owned_by_spl_hf(tmp_path / "marked")


def test_a_users_symlink_empty_folder_or_file_inside_an_old_build_is_refused_and_named(tmp_path):
    # reliability review F12: --overwrite deleted a user's symlink or empty folder inside a build
    target = tmp_path / "userdir"
    target.mkdir()
    (target / "keep.txt").write_text("user data")
    for name, make in [
        ("evil_link", lambda p: p.symlink_to(target, target_is_directory=True)),
        ("file_link", lambda p: p.symlink_to(target / "keep.txt")),
        ("empty_dir", lambda p: p.mkdir()),
        ("mynotes.txt", lambda p: p.write_text("notes")),
    ]:
        out = tmp_path / f"ds_{name}"
        write_dataset_folder(out, configs(), "# card\n")
        make(out / name)
        assert not owned_by_spl_hf(out), name
        with pytest.raises(
            OutputError, match=rf"holds files spl_hf did not write, by its record: {name}/? \("
        ):
            guard_dir(out, overwrite=True)
        assert os.path.lexists(out / name)
    assert (target / "keep.txt").read_text() == "user data"


# --- write_dataset_folder ---------------------------------------------------------------------


def test_refused_target_is_left_untouched(tmp_path):
    out = tmp_path / "target"
    (out / ".git").mkdir(parents=True)
    (out / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (out / "notes.md").write_text("mine")
    before = snapshot(tmp_path)
    for overwrite in (False, True):
        with pytest.raises(OutputError):
            write_dataset_folder(out, configs(), "# card\n", overwrite=overwrite)
    assert snapshot(tmp_path) == before
    assert temps(out) == []


def test_replace_with_overwrite_and_permissions_follow_umask(tmp_path, umask022):
    out = tmp_path / "ds"
    write_dataset_folder(out, configs(2), "# one\n")
    written = write_dataset_folder(out, configs(5), "# two\n", overwrite=True)
    assert (out / "README.md").read_text() == "# two\n"
    assert verify_manifest(out) == [] and set(written.files) == {
        "README.md",
        "data/train-00000-of-00001.parquet",
    }
    assert not (out / MARKER).exists()
    assert temps(out) == []
    for p in [out, *out.rglob("*")]:
        mode = stat.S_IMODE(p.stat().st_mode)
        assert mode == (0o755 if p.is_dir() else 0o644), (p, oct(mode))


def test_failure_while_swapping_puts_the_old_build_back(tmp_path, monkeypatch):
    out = tmp_path / "ds"
    write_dataset_folder(out, configs(2), "# old\n")
    old = snapshot(out)
    real_rename = os.rename
    calls = []

    def rename(src, dst):
        calls.append((Path(src).name, Path(dst).name))
        if len(calls) == 2:  # old moved aside; moving the new build in fails
            raise OSError(28, "No space left on device")
        return real_rename(src, dst)

    monkeypatch.setattr(folder_mod.os, "rename", rename)
    with pytest.raises(OSError, match="No space"):
        write_dataset_folder(out, configs(5), "# new\n", overwrite=True)
    assert calls[0][0] == "ds" and ".spl_hf-old-" in calls[0][1]
    assert snapshot(out) == old and temps(out) == []


def test_kill_between_moves_is_recovered_by_the_next_run(tmp_path, monkeypatch):
    out = tmp_path / "ds"
    write_dataset_folder(out, configs(2), "# old\n")
    old = snapshot(out)
    real_rename = os.rename

    class Killed(BaseException):
        pass

    def rename(src, dst):
        if Path(src).name == "ds" or Path(dst).name != "ds":
            return real_rename(src, dst)
        raise Killed  # a kill after the old build was moved aside: nothing else runs

    monkeypatch.setattr(folder_mod.os, "rename", rename)
    monkeypatch.setattr(folder_mod.shutil, "rmtree", lambda *a, **k: None)  # killed: no cleanup either
    with pytest.raises(Killed):
        write_dataset_folder(out, configs(5), "# new\n", overwrite=True)
    assert not out.exists()
    aside = [n for n in temps(out) if ".spl_hf-old-" in n]
    assert len(aside) == 1 and snapshot(tmp_path / aside[0]) == old  # the old build is whole, aside
    monkeypatch.undo()

    # Without --overwrite the next run restores the old build and refuses to replace it.
    with pytest.raises(OutputError, match="--overwrite"):
        write_dataset_folder(out, configs(5), "# new\n")
    assert snapshot(out) == old and temps(out) == []
    write_dataset_folder(out, configs(5), "# new\n", overwrite=True)
    assert (out / "README.md").read_text() == "# new\n" and temps(out) == []


def test_stale_partial_folders_of_ours_are_removed_others_kept(tmp_path):
    out = tmp_path / "ds"
    partial = tmp_path / ".ds.spl_hf-new-deadbeef"
    mark_output(partial, "partial dataset build")
    (partial / "data").mkdir()
    (partial / "data" / "train-00000-of-00001.parquet").write_bytes(b"half")
    lookalike = tmp_path / ".ds.spl_hf-new-user"  # the same name pattern, but not ours
    lookalike.mkdir()
    (lookalike / "keep.txt").write_text("mine")
    live = tmp_path / ".ds.spl_hf-new-cafe0000"  # a concurrent run still writing (its parent is alive)
    mark_output(live, "partial dataset build")
    meta = json.loads((live / MARKER).read_text())
    (live / MARKER).write_text(json.dumps({**meta, "pid": os.getppid()}))
    dead = json.loads((partial / MARKER).read_text())
    (partial / MARKER).write_text(json.dumps({**dead, "pid": _dead_pid()}))
    write_dataset_folder(out, configs(), "# card\n")
    assert not partial.exists()
    assert (lookalike / "keep.txt").read_text() == "mine"
    assert live.is_dir()


def test_inputs_inside_the_output_are_refused_before_writing(tmp_path):
    data = tmp_path / "in" / "scores.parquet"
    data.parent.mkdir()
    data.write_bytes(b"PAR1")
    before = snapshot(tmp_path)
    with pytest.raises(OutputError, match="holds an input"):
        write_dataset_folder(tmp_path / "in", configs(), "# card\n", inputs=[data])
    with pytest.raises(OutputError, match="holds an input"):
        write_dataset_folder(tmp_path, configs(), "# card\n", inputs=[data], overwrite=True)
    assert snapshot(tmp_path) == before


def test_verify_manifest_reports_missing_unlisted_and_changed_files(tmp_path):
    out = tmp_path / "ds"
    write_dataset_folder(out, configs(), "# card\n")
    (out / "README.md").write_text("# edited\n")
    (out / "smuggled.parquet").write_bytes(b"x")
    assert verify_manifest(out) == ["README.md", "smuggled.parquet"]
    (out / MANIFEST).unlink()
    assert verify_manifest(out) == [MANIFEST]
    (out / MANIFEST).write_text("not a manifest line\n")
    with pytest.raises(ValueError, match=r"MANIFEST.sha256:1: malformed"):
        verify_manifest(out)


# --- row files (judge, label, generate outputs) ---------------------------------------------


def test_row_files_follow_umask_and_leave_no_temp(tmp_path, umask022):
    from spl_hf.backends.io import write_rows

    for name in ("rows.jsonl", "rows.parquet"):
        write_rows(tmp_path / name, [{"a": 1}, {"a": 2}])
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o644
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rows.jsonl", "rows.parquet"]
    with pytest.raises(ValueError, match="unsupported output type"):
        write_rows(tmp_path / "rows.csv", [{"a": 1}])
    assert not (tmp_path / "rows.csv").exists()


def test_row_readers_name_the_file_and_line(tmp_path):
    from spl_hf.jsonl import read_rows

    bad = tmp_path / "pairs.jsonl"
    bad.write_bytes(b'{"a": 1}\n{"a": "caf\xe9"}\n')
    with pytest.raises(ValueError, match=r"pairs.jsonl:2: not valid UTF-8"):
        read_rows(bad)
    lfs = tmp_path / "test.parquet"
    lfs.write_text("version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 12\n")
    with pytest.raises(ValueError, match="Git LFS pointer"):
        read_rows(lfs)
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"PAR1 truncated")
    with pytest.raises(ValueError, match="broken.parquet: cannot read parquet"):
        read_rows(broken)
    with pytest.raises(FileNotFoundError, match="not a file"):
        read_rows(tmp_path)
