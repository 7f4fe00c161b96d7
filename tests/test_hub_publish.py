"""`spl-hf publish` against the local Hub server, loaded back by fresh client processes."""

from __future__ import annotations

import contextlib
import io
import shutil
import threading
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spl_hf.cli import main
from spl_hf.dataset.folder import sha256_file
from spl_hf.hub._publish import build_files, publish
from spl_hf.hub.roundtrip import split_digests
from tests import procs
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
    assert spl.files == sorted([*build_files(builds["spl"]), "provenance.json"])
    assert spl.configs == ["preferences", "derivations"]
    assert (
        spl.load_line()
        == f'load_dataset("org/spl", "preferences", split="train", revision="{spl.commit_sha}")'
    )
    assert set(spl.to_json()) == {
        "repo_id",
        "commit_sha",
        "files",
        "configs",
        "changed",
        "private",
        "provenance",
    }
    # Every config and split: same Features, same rows in the same order as the local folder.
    assert remote[0] == local["spl"] and remote[1] == local["tenets"]
    assert {"preferences/train", "derivations/xstest"} <= set(remote[0]) and "all/train" in remote[1]


def test_the_judge_quality_figure_is_published_with_the_tenet_build(published, builds, hub, hub_client):
    from huggingface_hub import HfApi

    api = HfApi(endpoint=hub.url, token=TOKEN)
    files = api.list_repo_files("org/tenets", repo_type="dataset", revision=published["tenets_sha"])
    assert "judge_quality.png" in files and "judge_quality.png" in build_files(builds["tenets"])
    assert "](judge_quality.png)" in (builds["tenets"] / "README.md").read_text()  # the card shows it


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
    assert sorted(at_main) == sorted([*build_files(builds["spl_reshaped"]), "provenance.json"])
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


def _env(monkeypatch, hub) -> None:
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    monkeypatch.setenv("HF_TOKEN", TOKEN)


def test_private_onto_an_existing_public_repo_makes_it_private(builds, hub, monkeypatch, capsys, hub_client):
    from huggingface_hub import HfApi
    from huggingface_hub.errors import RepositoryNotFoundError

    _env(monkeypatch, hub)
    HfApi(endpoint=hub.url, token=TOKEN).create_repo("org/vis", repo_type="dataset")  # public
    assert main(["publish", str(builds["tenets"]), "--repo_id", "org/vis", "--private"]) == 0
    assert "was public: made private" in capsys.readouterr().out
    with pytest.raises(RepositoryNotFoundError):
        HfApi(endpoint=hub.url, token=False).repo_info("org/vis", repo_type="dataset")
    # Without --private a private repo stays private: nothing asked to make it public.
    assert main(["publish", str(builds["tenets"]), "--repo_id", "org/vis"]) == 0
    assert HfApi(endpoint=hub.url, token=TOKEN).repo_info("org/vis", repo_type="dataset").private is True


def test_private_is_refused_when_the_visibility_cannot_be_changed(builds, hub, monkeypatch, hub_client):
    from huggingface_hub import HfApi

    _env(monkeypatch, hub)
    HfApi(endpoint=hub.url, token=TOKEN).create_repo("org/stuck", repo_type="dataset")
    import spl_hf.hub._publish as pub

    def refuse(self, *args, **kwargs):  # a Hub that does not let this token change settings
        import httpx2
        from huggingface_hub.errors import HfHubHTTPError

        request = httpx2.Request("PUT", f"{hub.url}/api/datasets/org/stuck/settings")
        raise HfHubHTTPError(
            "403 Forbidden: settings are read-only", response=httpx2.Response(403, request=request)
        )

    monkeypatch.setattr(HfApi, "update_repo_settings", refuse)
    with pytest.raises(ValueError, match="is public, and its visibility could not be changed"):
        pub.publish(builds["tenets"], "org/stuck", private=True)
    assert HfApi(endpoint=hub.url, token=TOKEN).list_repo_files("org/stuck", repo_type="dataset") == []


def test_create_pr_with_nothing_to_change_says_nothing_changed(builds, hub, monkeypatch, capsys, hub_client):
    from huggingface_hub import HfApi

    _env(monkeypatch, hub)
    assert main(["publish", str(builds["tenets"]), "--repo_id", "org/same"]) == 0
    first = capsys.readouterr().out
    assert "published" in first
    assert main(["publish", str(builds["tenets"]), "--repo_id", "org/same", "--create_pr"]) == 0
    out = capsys.readouterr().out
    assert "nothing changed" in out and "no pull request opened" in out and "published" not in out
    refs = HfApi(endpoint=hub.url, token=TOKEN).list_repo_refs(
        "org/same", repo_type="dataset", include_pull_requests=True
    )
    assert refs.pull_requests == []


def test_publish_with_sources_refuses_a_consistent_forgery_and_records_what_it_checked(
    built_tenets, hub, tmp_path, monkeypatch, capsys, hub_client
):
    import hashlib
    import json

    from huggingface_hub import HfApi, hf_hub_download

    from spl_hf.sources import sample_paths
    from tests.audit_fixtures import copy_build, tenet_files
    from tests.test_audit_provenance import _forge_tenet_row

    _env(monkeypatch, hub)
    specs = [f"{name}={path}" for name, path in sample_paths().items()]
    forged = copy_build(built_tenets, tmp_path / "forged")
    first = pq.read_table(tenet_files(forged)[0]).to_pylist()[0]
    _forge_tenet_row(forged, first["derivation"]["pair_id"], first["tenet"], "A forged reply.")
    assert main(["audit", str(forged)]) == 0  # self-consistent: digests, certificate, manifest agree
    capsys.readouterr()
    assert main(["publish", str(forged), "--repo_id", "org/forged", "--sources", *specs]) == 2
    err = capsys.readouterr().err
    assert (
        "does not audit clean" in err
        and "differ from --sources" in err
        and first["derivation"]["pair_id"] in err
    )
    api = HfApi(endpoint=hub.url, token=TOKEN)
    assert not api.repo_exists("org/forged", repo_type="dataset")
    # The real build passes, and the release says what was checked, by sha256, in the card too.
    assert (
        main(["publish", str(built_tenets), "--repo_id", "org/checked", "--sources", *specs, "--json"]) == 0
    )
    result = json.loads(capsys.readouterr().out)
    download = dict(repo_type="dataset", revision=result["commit_sha"], endpoint=hub.url, token=TOKEN)
    record = json.loads(
        Path(hf_hub_download("org/checked", "provenance.json", cache_dir=tmp_path, **download)).read_text()
    )
    want = {
        (name, Path(path).name, hashlib.sha256(Path(path).read_bytes()).hexdigest())
        for name, path in sample_paths().items()
    }
    assert record["checked"] is True and record["rows_differing"] == 0 and record["rows_checked"] > 0
    assert {(s["key"], s["file"], s["sha256"]) for s in record["sources"]} == want
    card = Path(hf_hub_download("org/checked", "README.md", cache_dir=tmp_path, **download)).read_text()
    assert "## Provenance check at publication" in card and all(sha in card for *_, sha in want)
    assert str(Path(next(iter(sample_paths().values()))).parent) not in card  # no local paths
    # Without --sources the release says it was not checked.
    assert main(["publish", str(built_tenets), "--repo_id", "org/unchecked", "--json"]) == 0
    sha = json.loads(capsys.readouterr().out)["commit_sha"]
    download["revision"] = sha
    card = Path(hf_hub_download("org/unchecked", "README.md", cache_dir=tmp_path, **download)).read_text()
    assert "Not checked: this release was published without `--sources`" in card


def test_an_spl_build_published_with_its_prompt_and_candidate_files(
    builds, hub, monkeypatch, capsys, hub_client
):
    import json

    from spl_hf.build.spl import _sample

    _env(monkeypatch, hub)
    prompts, candidates = _sample("spl_prompts.jsonl"), _sample("spl_candidates.jsonl")
    argv = ["publish", str(builds["spl"]), "--repo_id", "org/splsrc", "--json"]
    assert main([*argv, "--sources", f"prompts={prompts}", f"candidates={candidates}"]) == 0
    record = json.loads(capsys.readouterr().out)["provenance"]
    assert record["checked"] and record["rows_differing"] == 0 and record["rows_checked"] > 0
    assert [(s["key"], s["file"]) for s in record["sources"]] == [
        ("prompts", "spl_prompts.jsonl"),
        ("candidates", "spl_candidates.jsonl"),
    ]
    # Sources that are not this build's (the prompts given as candidates too): refused, nothing pushed.
    assert main([*argv, "--sources", f"prompts={prompts}", f"candidates={prompts}"]) == 2
    assert "does not audit clean" in capsys.readouterr().err


def test_hf_auth_whoami_answers_with_the_servers_token(hub, tmp_path):
    import sys

    env = client_env(hub, tmp_path / "home")
    hf = str(Path(sys.executable).with_name("hf"))
    ok = procs.run([hf, "auth", "whoami"], env=env, capture_output=True, text=True, timeout=300)
    assert ok.returncode == 0 and "local" in ok.stdout, ok.stdout + ok.stderr
    assert TOKEN not in ok.stdout + ok.stderr
    bad = procs.run(
        [hf, "auth", "whoami"], env={**env, "HF_TOKEN": "wrong"}, capture_output=True, text=True, timeout=300
    )
    assert bad.returncode != 0 and "Invalid user token" in bad.stdout + bad.stderr


def test_a_rehearsal_build_is_published_only_to_a_loopback_hub(tmp_path, monkeypatch) -> None:
    from spl_hf.contract.scores import REHEARSAL_MODEL_ID
    from spl_hf.errors import SplHfError

    folder = tmp_path / "rehearsal"
    (folder / "judge_scores").mkdir(parents=True)
    (folder / "MANIFEST.sha256").write_text("")
    scores = pa.table({"model_id": ["a-judge", REHEARSAL_MODEL_ID]})
    pq.write_table(scores, folder / "judge_scores" / "train-00000-of-00001.parquet")
    for endpoint in ("https://huggingface.co", None):
        if endpoint is None:
            monkeypatch.delenv("HF_ENDPOINT", raising=False)
        else:
            monkeypatch.setenv("HF_ENDPOINT", endpoint)
        with pytest.raises(SplHfError, match="rehearsal engine"):
            publish(folder, "org/name")
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    with pytest.raises(SplHfError, match="does not audit clean"):  # past the refusal: the audit decides
        publish(folder, "org/name")
