"""Auditing a Hub dataset at a pinned revision: the snapshot is downloaded and audited like a folder.

The downloader is replaced by a copy of a local build (with what a Hub snapshot adds: the repo's
.gitattributes and huggingface_hub's metadata folder); the HTTP round trip is tested with the local
Hub server.
"""

import json
import shutil

import pytest

import spl_hf.audit.hub as hub
from spl_hf.cli import main
from tests.audit_fixtures import copy_build, rewrite, tenet_files


@pytest.fixture
def fake_hub(monkeypatch):
    repos: dict[tuple[str, str], object] = {}
    seen: list = []

    def download(repo_id, revision, local_dir):
        if (repo_id, revision) not in repos:
            raise OSError(f"404: {repo_id}@{revision} not found")
        shutil.copytree(repos[(repo_id, revision)], local_dir)
        (local_dir / ".gitattributes").write_text("*.parquet filter=lfs diff=lfs merge=lfs -text\n")
        (local_dir / ".cache" / "huggingface").mkdir(parents=True)
        (local_dir / ".cache" / "huggingface" / "download.lock").write_text("")
        seen.append(local_dir)
        return local_dir

    monkeypatch.setattr(hub, "download_snapshot", download)
    return repos, seen


def test_a_hub_revision_is_audited_like_a_local_folder(fake_hub, built_tenets, tmp_path, capsys):
    repos, seen = fake_hub
    repos[("org/tenets", "v1")] = built_tenets
    assert main(["audit", "org/tenets", "--revision", "v1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["kind"] == "tenets" and out["certificate_ok"] and out["unlisted_files"] == []
    assert (out["repo_id"], out["revision"]) == ("org/tenets", "v1")
    assert not seen[0].exists()  # the snapshot lived in a temporary folder, removed after the audit

    tampered = copy_build(built_tenets, tmp_path / "v2")
    shard = tenet_files(tampered)[0]

    def swap(rows):
        rows[0]["chosen"], rows[0]["rejected"] = rows[0]["rejected"], rows[0]["chosen"]

    rewrite(shard, swap)
    repos[("org/tenets", "v2")] = tampered
    assert main(["audit", "org/tenets", "--revision", "v2", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["manifest_mismatches"] == [shard.relative_to(tampered).as_posix()]


def test_a_hub_id_needs_a_revision_and_a_failed_download_is_a_clear_error(fake_hub, built_spl, capsys):
    repos, _ = fake_hub
    repos[("org/spl", "main")] = built_spl
    assert main(["audit", "org/spl"]) == 2
    assert "give --revision" in capsys.readouterr().err
    assert main(["audit", "org/spl", "--revision", "nope"]) == 2
    assert "org/spl@nope: cannot download the dataset" in capsys.readouterr().err
    assert main(["audit", "org/spl", "--revision", "main", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["rows"] == 216


def test_a_revision_with_a_local_path_is_refused(built_spl, capsys):
    assert main(["audit", str(built_spl), "--revision", "v1"]) == 2
    assert "--revision applies to a Hub repo id" in capsys.readouterr().err
