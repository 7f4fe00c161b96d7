"""Every shell command in README.md and docs/ runs as written, on demo-shaped outputs, with no network.

The ``out/demo`` folders the docs name are the test fixtures' builds (the demo's own SPL sample build
and a tenet build with its ``sft`` config); Hub commands go to the local Hub server of the tests
(``HF_ENDPOINT``), which is all a ``publish`` needs. A command that cannot run here must be listed in
SKIP with its reason: a new command in the docs is run, or fails this test until it is listed.
"""

from __future__ import annotations

import re
import shlex
import shutil
import sys
from pathlib import Path

from tests import procs
from tests.hub_fixtures import client_env

REPO = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"```(?:bash|sh|console)\n(.*?)```", re.S)
# (start of the command, why it is not run here)
SKIP = (
    ("pip install", "installs packages from an index"),
    ("make demo", "the whole demo with the embedded model (minutes); CI runs it on its own"),
    ("make test", "the whole suite, of which this test is part"),
    ("export ", "applied instead as the environment of the commands that follow (the local Hub's)"),
    ("spl-hf hub serve", "the tests' own local Hub server stands in for it (tests/hub_fixtures.py)"),
    (
        "ray ",
        "starts or inspects a Ray cluster node; `make test-ray` runs the Ray executor on a local runtime",
    ),
)


def doc_commands() -> list[tuple[str, str]]:
    """(file, command line) of every shell block in README.md and docs/, continuations joined."""
    out = []
    for path in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        for block in BLOCK.findall(path.read_text(encoding="utf-8")):
            for line in block.replace("\\\n", " ").splitlines():
                if line.strip() and not line.strip().startswith("#"):
                    out.append((path.name, line.strip()))
    return out


def _argv(line: str) -> list[str]:
    words = shlex.split(line, comments=True)
    if words[0] == "spl-hf":
        return [sys.executable, "-m", "spl_hf.cli", *words[1:]]
    if words[0] == "python":
        return [sys.executable, *words[1:]]
    raise AssertionError(f"{line!r}: not a spl-hf or python command; run it here or add it to SKIP")


def _demo_outputs(cwd: Path, built_spl: Path, built_tenets_sft: Path) -> None:
    shutil.copytree(built_spl, cwd / "out/demo/spl")
    shutil.copytree(built_tenets_sft, cwd / "out/demo/tenets_release/dataset")
    (cwd / "recipes").symlink_to(REPO / "recipes")


def test_every_documented_command_runs(built_spl, built_tenets_sft, hub, tmp_path):
    cwd = tmp_path / "work"
    cwd.mkdir()
    _demo_outputs(cwd, built_spl, built_tenets_sft)
    env = client_env(hub, tmp_path / "home")
    ran, skipped = [], []
    for name, line in doc_commands():
        reason = next((why for start, why in SKIP if line.startswith(start)), None)
        if reason:
            skipped.append((name, line, reason))
            continue
        proc = procs.run(_argv(line), cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, f"{name}: {line}\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
        ran.append(line)
    assert len(ran) >= 8 and any("explain" in r for r in ran) and any("publish" in r for r in ran)
    assert {s[1].split()[0] for s in skipped} <= {"pip", "make", "export", "spl-hf", "ray"}
