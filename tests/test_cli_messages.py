"""Messages that point the right way (issue 36 item 5, review F10/F11 and its minor list): each names the
problem and the fix, exits 2 (or quietly on a closed pipe), and leaves nothing behind."""

from __future__ import annotations

import os
import socket
import sys

import pytest

from spl_hf.cli import main
from tests import procs
from tests.conftest import REPO
from tests.hub_fixtures import TOKEN

DEMO = REPO / "recipes" / "tenets" / "demo.yaml"


def _release(tmp_path, *extra: str) -> list[str]:
    return [
        "release",
        "tenets",
        *extra,
        "--run_dir",
        str(tmp_path / "run"),
        "--output_dir",
        str(tmp_path / "ds"),
    ]


def test_a_recipe_key_typo_gets_a_did_you_mean(tmp_path, capsys):
    recipe = tmp_path / "r.yaml"
    recipe.write_text(DEMO.read_text(encoding="utf-8").replace("capacity: 2", "capcity: 2"), encoding="utf-8")
    assert main(_release(tmp_path, "--config", str(recipe), "--dry_run")) == 2
    err = capsys.readouterr().err
    assert "'capcity' (did you mean 'capacity'?)" in err and str(recipe) in err


@pytest.mark.parametrize(
    ("flag", "hint"),
    [("--dry-run", "--dry-run is spelled --dry_run"), ("--dryrun", "did you mean --dry_run?")],
)
def test_a_kebab_case_or_misspelt_flag_is_refused_by_the_command_with_the_flag_meant(
    tmp_path, capsys, flag, hint
):
    with pytest.raises(SystemExit) as info:
        main(_release(tmp_path, "--config", str(DEMO), flag))
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "spl-hf release tenets: error: unrecognized arguments" in err and hint in err
    assert "usage: spl-hf release tenets" in err  # the command's usage, not the top level's


def test_the_demo_on_a_folder_it_cannot_resume_does_not_suggest_a_flag_it_lacks(
    tmp_path, capsys, monkeypatch
):
    # review F10: "pass --overwrite" from inside the demo, which has no --overwrite
    import spl_hf.demo
    from spl_hf.outputs import guard_dir, mark_output

    inner = tmp_path / "copied" / "tenets_release" / "dataset"
    inner.mkdir(parents=True)
    mark_output(inner, "release tenets")  # what a copied demo folder holds: an earlier output, not this run's
    monkeypatch.setattr(spl_hf.demo, "run_demo", lambda out: guard_dir(inner))  # the release's own guard
    assert main(["demo", "--output_dir", str(tmp_path / "fresh")]) == 2
    err = capsys.readouterr().err
    assert "has no --overwrite" in err and "give it a new --output_dir" in err
    assert "pass --overwrite" not in err and inner.is_dir()


def test_tenets_list_into_a_closed_pipe_exits_quietly():
    read, write = os.pipe()
    os.close(read)  # `| head` that already left
    try:
        out = procs.run([sys.executable, "-m", "spl_hf.cli", "tenets", "list"], timeout=60, stdout=write)
    finally:
        os.close(write)
    assert out.returncode == 141 and out.stderr == ""


def test_hub_serve_on_a_busy_port_is_one_line_and_leaves_no_root_behind(tmp_path):
    pytest.importorskip("spl_hf_hub_server", reason="the local Hub server is the [server] extra")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        env = {**os.environ, "SPL_HF_HUB_TOKEN": TOKEN}
        cmd = [sys.executable, "-m", "spl_hf.cli", "hub", "serve", "--root", str(tmp_path / "hub2")]
        out = procs.run([*cmd, "--port", str(port)], timeout=60, env=env)
    assert out.returncode == 2, out.stderr
    assert (
        f"cannot listen on 127.0.0.1:{port}: the port is in use" in out.stderr
        and "Traceback" not in out.stderr
    )
    assert not (tmp_path / "hub2").exists()  # it held nothing but the server's own lock


def test_publishing_with_xet_on_says_so_and_leaves_no_empty_repo(
    builds, hub, monkeypatch, capsys, hub_client
):
    # review F10: "cannot reach" and an empty repo left behind
    import huggingface_hub.constants
    from huggingface_hub import HfApi

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_DISABLE_XET", False)
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    assert main(["publish", str(builds["spl"]), "--repo_id", "rev/xet"]) == 2
    err = capsys.readouterr().err
    assert "does not take Xet uploads; set HF_HUB_DISABLE_XET=1" in err and "cannot reach" not in err
    assert not HfApi(endpoint=hub.url, token=TOKEN).repo_exists("rev/xet", repo_type="dataset")
