"""`spl-hf publish` against the local Hub server, loaded back by fresh client processes."""

from __future__ import annotations

import contextlib
import io
import shutil
import threading

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spl_hf.cli import main
from spl_hf.hub.folder import sha256_file
from spl_hf.hub.publish import build_files, publish
from spl_hf.hub.roundtrip import split_digests
from tests.hub_fixtures import TOKEN, client_env, remote_digests


@pytest.fixture(scope="module")
def local(builds):
    """What load_dataset gives on each local build folder, per config/split."""
    return {
        "spl": split_digests(str(builds["spl"])),
        "tenets": split_digests(str(builds["tenets"])),
        "spl_reshaped": split_digests(str(builds["spl_reshaped"]), configs=["preferences"]),
    }


@pytest.fixture(scope="module")
def published(hub, builds):
    """Both builds pushed at the same time: the tenet build by the CLI, the SPL build by publish()."""
    import huggingface_hub.constants

    results: dict = {}
    errors: list = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_ENDPOINT", hub.url)
        mp.setenv("HF_TOKEN", TOKEN)
        mp.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
        mp.setattr(huggingface_hub.constants, "HF_HUB_DISABLE_XET", True)

        def cli() -> None:
            out = io.StringIO()
            try:
                with contextlib.redirect_stdout(out):
                    results["cli_rc"] = main(["publish", str(builds["tenets"]), "--repo_id", "org/tenets"])
            except Exception as exc:  # reported below, on the test thread
                errors.append(exc)
            results["cli_out"] = out.getvalue()

        def api() -> None:
            try:
                results["spl"] = publish(builds["spl"], "org/spl", message="first release")
            except Exception as exc:
                errors.append(exc)

        threads = [threading.Thread(target=cli), threading.Thread(target=api)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        out = results["cli_out"]
        results["tenets_sha"] = next(
            line.split()[1] for line in out.splitlines() if line.startswith("commit ")
        )
        # Then the SPL build again, reshaped: a source gone, every shard renamed.
        results["reshaped"] = publish(builds["spl_reshaped"], "org/spl", message="reshaped")
    return results


@pytest.fixture(scope="module")
def remote(published, hub, tmp_path_factory):
    """Every config/split loaded back by ONE new process with an empty HF_HOME, pinned by sha."""
    return remote_digests(
        client_env(hub, tmp_path_factory.mktemp("fresh-home")),
        [
            ("org/spl", published["spl"].commit_sha),  # the first release, after the reshaped one replaced it
            ("org/tenets", published["tenets_sha"]),
            ("org/spl", published["reshaped"].commit_sha, ["preferences"]),
        ],
    )


def test_two_builds_pushed_concurrently_load_back_identical(published, remote, local, builds):
    out = published["cli_out"]
    assert published["cli_rc"] == 0 and TOKEN not in out
    sha = published["tenets_sha"]
    assert f'load_dataset("org/tenets", "all", split="train", revision="{sha}")' in out
    spl = published["spl"]
    assert spl.files == build_files(builds["spl"]) and spl.configs == ["preferences", "derivations"]
    assert (
        spl.load_line()
        == f'load_dataset("org/spl", "preferences", split="train", revision="{spl.commit_sha}")'
    )
    assert set(spl.to_json()) == {"repo_id", "commit_sha", "files", "configs"}
    # Every config and split: same Features, same rows in the same order as the local folder.
    assert remote[0] == local["spl"] and remote[1] == local["tenets"]
    assert {"preferences/train", "derivations/xstest"} <= set(remote[0]) and "all/train" in remote[1]


def test_republish_reshaped_removes_stale_files_and_old_commit_still_loads(
    published,
    remote,
    local,
    builds,
    hub,
    hub_client,
):
    from huggingface_hub import HfApi

    old, new = published["spl"], published["reshaped"]
    api = HfApi(endpoint=hub.url, token=TOKEN)
    at_main = api.list_repo_files("org/spl", repo_type="dataset")
    assert sorted(at_main) == sorted(build_files(builds["spl_reshaped"]))
    gone = set(build_files(builds["spl"])) - set(at_main)
    assert (
        "preferences/xstest-00000-of-00001.parquet" in gone
        and "derivations/ultrachat-00000-of-00001.parquet" in gone
    )
    assert sorted(new.deleted) == sorted(gone)
    commits = [c.commit_id for c in api.list_repo_commits("org/spl", repo_type="dataset")]
    assert commits[:2] == [new.commit_sha, old.commit_sha]
    assert remote[2] == local["spl_reshaped"]
    assert "preferences/xstest" in remote[0] and "preferences/xstest" not in remote[2]


def test_a_folder_that_does_not_audit_clean_is_refused(
    builds, hub, tmp_path, monkeypatch, capsys, hub_client
):
    from huggingface_hub import HfApi
    from huggingface_hub.errors import RepositoryNotFoundError

    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    edited = tmp_path / "edited"
    shutil.copytree(builds["spl"], edited)
    shard = next((edited / "derivations").glob("ultrachat-*.parquet"))
    table = pq.read_table(shard)
    rows = table.to_pylist()
    rows[0]["derivation"]["label"] = "b" if rows[0]["derivation"]["label"] == "a" else "a"
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), shard)
    assert main(["publish", str(edited), "--repo_id", "org/edited"]) == 2
    err = capsys.readouterr().err
    assert "does not audit clean" in err and "MANIFEST.sha256" in err and shard.name in err
    # With the manifest made to agree, the row audit itself refuses it.
    manifest = edited / "MANIFEST.sha256"
    rel = shard.relative_to(edited).as_posix()
    manifest.write_text(
        "".join(
            f"{sha256_file(shard)}  {rel}\n" if line.endswith(f"  {rel}") else line + "\n"
            for line in manifest.read_text().splitlines()
        )
    )
    assert main(["publish", str(edited), "--repo_id", "org/edited"]) == 2
    err = capsys.readouterr().err
    assert (
        "does not audit clean" in err
        and "1 of 216 rows do not reproduce" in err
        and rows[0]["pair_id"] in err
    )
    with pytest.raises(RepositoryNotFoundError):  # refused before anything was created
        HfApi(endpoint=hub.url, token=TOKEN).repo_info("org/edited", repo_type="dataset")


def test_publish_without_a_token_is_refused_clearly(builds, hub, monkeypatch, capsys, hub_client):
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setenv("HF_HOME", str(builds["spl"].parent / "empty-home"))  # no stored login either
    assert main(["publish", str(builds["spl"]), "--repo_id", "org/nobody"]) == 2
    err = capsys.readouterr().err
    assert "401" in err and "HF_TOKEN" in err


def test_a_tampered_file_pushed_is_served_as_pushed(published, builds, hub, tmp_path, hub_client):
    """The server stores what it is given: an audit by repo id must see the tampered bytes."""
    from huggingface_hub import CommitOperationAdd, HfApi, snapshot_download

    api = HfApi(endpoint=hub.url, token=TOKEN)
    rel = next(
        p for p in build_files(builds["tenets"]) if p.endswith(".parquet") and not p.startswith("judge")
    )
    data = bytearray((builds["tenets"] / rel).read_bytes())
    data[len(data) // 2] ^= 0xFF
    info = api.create_commit(
        "org/tenets", [CommitOperationAdd(rel, bytes(data))], commit_message="tamper", repo_type="dataset"
    )
    snap = snapshot_download(
        "org/tenets",
        repo_type="dataset",
        revision=info.oid,
        endpoint=hub.url,
        token=TOKEN,
        cache_dir=tmp_path / "cache",
    )
    assert (tmp_path / snap / rel).read_bytes() == bytes(data) != (builds["tenets"] / rel).read_bytes()
    assert not list((tmp_path / snap / "all").glob("*"))  # `all` stores no file of its own


def test_audit_by_repo_id_passes_the_release_and_reports_the_tampered_commit(
    published,
    builds,
    hub,
    tmp_path,
    hub_client,
):
    """`spl-hf audit ORG/NAME --revision SHA` over HTTP: the published commit audits clean, a tampered one fails."""
    from huggingface_hub import CommitOperationAdd, HfApi

    from tests.hub_fixtures import run_cli

    env = client_env(hub, tmp_path / "home")
    clean = run_cli(["audit", "org/tenets", "--revision", published["tenets_sha"], "--json"], env)
    assert clean.returncode == 0, clean.stderr[-2000:]
    assert '"reproduced"' in clean.stdout and TOKEN not in clean.stdout + clean.stderr
    rel = next(
        p for p in build_files(builds["tenets"]) if p.endswith(".parquet") and not p.startswith("judge")
    )
    table = pq.read_table(builds["tenets"] / rel)
    edited = table.set_column(
        table.schema.get_field_index("score"),
        "score",
        pa.array([s + 0.25 for s in table.column("score").to_pylist()]),
    )
    sink = pa.BufferOutputStream()
    pq.write_table(edited, sink)
    info = HfApi(endpoint=hub.url, token=TOKEN).create_commit(
        "org/tenets",
        [CommitOperationAdd(rel, sink.getvalue().to_pybytes())],
        commit_message="edit scores",
        repo_type="dataset",
        parent_commit=None,
    )
    tampered = run_cli(["audit", "org/tenets", "--revision", info.oid, "--json"], env)
    assert tampered.returncode == 1, tampered.stdout[-2000:] + tampered.stderr[-2000:]
    assert rel in tampered.stdout and "score" in tampered.stdout
