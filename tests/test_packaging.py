"""A wheel built from the repository works when installed normally (not editable), outside the repo."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests import procs
from tests.conftest import REPO


def _source_copy(dest: Path) -> Path:
    """The files git would ship (tracked and new, not ignored): no build leftovers, no .venv."""
    listed = (
        procs.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=REPO,
            capture_output=True,
            check=True,
            timeout=600,
            text=False,
        )
        .stdout.decode()
        .split("\0")
    )
    for rel in filter(None, listed):
        src = REPO / rel
        if src.is_file() and not src.is_symlink():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    return dest


@pytest.mark.slow
def test_wheel_installs_and_builds_and_audits_outside_the_repo(tmp_path: Path) -> None:
    src = _source_copy(tmp_path / "src")
    dist = tmp_path / "dist"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    procs.run(
        [*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(dist), str(src)],
        check=True,
        timeout=600,
        text=False,
        capture_output=False,
    )
    (wheel,) = dist.glob("spl_hf-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    cards = sorted(p.name for p in (REPO / "spl_hf" / "dataset" / "templates").glob("*.j2"))
    assert cards and {f"spl_hf/dataset/templates/{c}" for c in cards} <= names
    assert "spl_hf/data/rulebase_default.yaml" in names and "spl_hf/data/samples/spl_prompts.jsonl" in names
    compiler = bool(shutil.which("cc") or shutil.which("gcc"))
    # The digest's C kernel is an optional extension: built wherever a compiler is, else numpy is used.
    assert (
        any(n.startswith("spl_hf/contract/_strhash.") and n.endswith((".so", ".pyd")) for n in names)
        == compiler
    )

    target = tmp_path / "site"
    procs.run(
        [*pip, "install", "--no-deps", "--target", str(target), str(wheel)],
        check=True,
        timeout=600,
        text=False,
        capture_output=False,
    )
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {**os.environ, "PYTHONPATH": str(target)}  # the installed copy only, never the repository

    def cli(*args: str) -> subprocess.CompletedProcess:
        return procs.run(
            [sys.executable, "-m", "spl_hf.cli", *args],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    where, kernel = procs.run(
        [
            sys.executable,
            "-c",
            "import spl_hf; from spl_hf.contract import digest; print(spl_hf.__file__); print(digest.KERNEL)",
        ],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    ).stdout.splitlines()
    assert where.startswith(str(target)) and kernel == ("c" if compiler else "numpy")
    built = cli("derive", "--output_dir", "release")
    assert built.returncode == 0, built.stderr[-2000:]
    readme = (work / "release" / "README.md").read_text()
    assert "configs:" in readme and "derivations" in readme
    audited = cli("audit", "release")
    assert audited.returncode == 0, audited.stderr[-2000:]
    assert "reproduced" in audited.stdout
