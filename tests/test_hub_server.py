"""The local Hub server: persistence, atomic commits under SIGKILL, auth, 412, Range/ETag."""

from __future__ import annotations

import hashlib
import json
import socket
import urllib.error
import urllib.request
from urllib.parse import urlsplit

import pytest

from tests.hub_fixtures import TOKEN, HubProcess


@pytest.fixture
def server(tmp_path):
    """The server on a thread of this process (fast); the kill test uses a real process."""
    from spl_hf.hub.server import RunningServer

    with RunningServer(str(tmp_path / "root"), token=TOKEN) as running:
        yield running


@pytest.fixture
def server_process(tmp_path):
    hub = HubProcess(tmp_path / "root").start()
    yield hub
    hub.stop()


def _api(hub, token=TOKEN):
    from huggingface_hub import HfApi

    return HfApi(endpoint=hub.url, token=token)


def _seed(hub, repo="org/r", private=False):
    from huggingface_hub import CommitOperationAdd

    api = _api(hub)
    api.create_repo(repo, repo_type="dataset", private=private)
    ops = [
        CommitOperationAdd("README.md", b"---\nlicense: mit\n---\n# r\n"),
        CommitOperationAdd("data/train-00000-of-00001.parquet", bytes(range(256)) * 64),
    ]
    return api.create_commit(repo, ops, commit_message="first", repo_type="dataset").oid


def _raw(hub, request: bytes) -> socket.socket:
    """Send bytes on a raw connection and leave it open (a client cut off mid-request)."""
    u = urlsplit(hub.url)
    sock = socket.create_connection((u.hostname, u.port))
    sock.sendall(request)
    return sock


def _lfs_batch(hub, blob: bytes) -> str | None:
    """The upload URL the LFS batch call hands out for ``blob`` (None when the server has it)."""
    req = urllib.request.Request(
        f"{hub.url}/datasets/org/r.git/info/lfs/objects/batch",
        method="POST",
        data=json.dumps(
            {"operation": "upload", "objects": [{"oid": hashlib.sha256(blob).hexdigest(), "size": len(blob)}]}
        ).encode(),
        headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
    )
    (obj,) = json.loads(urllib.request.urlopen(req).read())["objects"]
    return obj.get("actions", {}).get("upload", {}).get("href")


def test_killed_mid_upload_and_mid_commit_leaves_the_previous_commit(server_process, hub_client):
    from huggingface_hub import CommitOperationAdd

    first = _seed(server_process)
    api = _api(server_process)
    before = sorted(api.list_repo_files("org/r", repo_type="dataset"))
    new = CommitOperationAdd("data/extra-00000-of-00001.parquet", b"\x00PAR1" * 5000)
    api.preupload_lfs_files("org/r", additions=[new], repo_type="dataset")  # the blob is on the server
    oid = new.upload_info.sha256.hex()
    body = (
        json.dumps({"key": "header", "value": {"summary": "second", "parentCommit": first}})
        + "\n"
        + json.dumps({"key": "lfsFile", "value": {"path": new.path_in_repo, "algo": "sha256", "oid": oid}})
    )
    head = (
        f"POST /api/datasets/org/r/commit/main HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
        f"Content-Type: application/x-ndjson\r\nContent-Length: {len(body) + 1000}\r\n\r\n"
    )
    blob = b"y" * 100_000
    href = _lfs_batch(server_process, blob)
    upload = f"PUT {urlsplit(href).path}?{urlsplit(href).query} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(blob)}\r\n\r\n"
    commit_sock = _raw(
        server_process, head.encode() + body.encode()
    )  # body cut short: the server waits for more
    upload_sock = _raw(server_process, upload.encode() + blob[:5000])  # an upload cut off after 5 kB
    server_process.kill()
    commit_sock.close()
    upload_sock.close()
    server_process.start()  # same root, new process and port
    api = _api(server_process)
    assert api.repo_info("org/r", repo_type="dataset").sha == first
    assert sorted(api.list_repo_files("org/r", repo_type="dataset")) == before
    assert _lfs_batch(server_process, blob) is not None  # the cut-off upload left no object behind
    # The store is intact: the next commit lands on top of the first.
    retry = CommitOperationAdd(new.path_in_repo, b"\x00PAR1" * 5000)
    second = api.create_commit(
        "org/r", [retry], commit_message="second", repo_type="dataset", parent_commit=first
    )
    assert [c.commit_id for c in api.list_repo_commits("org/r", repo_type="dataset")][:2] == [
        second.oid,
        first,
    ]


def test_stale_parent_commit_is_refused_with_412(server, hub_client):
    from huggingface_hub import CommitOperationAdd
    from huggingface_hub.errors import HfHubHTTPError

    first = _seed(server)
    api = _api(server)
    api.create_commit("org/r", [CommitOperationAdd("a.txt", b"a")], commit_message="a", repo_type="dataset")
    with pytest.raises(HfHubHTTPError) as exc:
        api.create_commit(
            "org/r",
            [CommitOperationAdd("b.txt", b"b")],
            commit_message="b",
            repo_type="dataset",
            parent_commit=first,
        )
    assert exc.value.response.status_code == 412
    assert "b.txt" not in api.list_repo_files("org/r", repo_type="dataset")


def test_private_repo_needs_the_token_and_a_wrong_token_is_refused(server, tmp_path, hub_client):
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError

    _seed(server, "org/secret", private=True)
    assert _api(server).repo_info("org/secret", repo_type="dataset").private is True
    with pytest.raises(RepositoryNotFoundError):
        _api(server, token=False).repo_info("org/secret", repo_type="dataset")
    with pytest.raises(RepositoryNotFoundError):
        hf_hub_download(
            "org/secret",
            "README.md",
            repo_type="dataset",
            endpoint=server.url,
            token=False,
            cache_dir=tmp_path,
        )
    with pytest.raises(HfHubHTTPError) as exc:
        _api(server, token="wrong").repo_info("org/secret", repo_type="dataset")
    assert exc.value.response.status_code == 401 and "Invalid credentials" in str(exc.value)
    with pytest.raises(HfHubHTTPError) as exc:  # writes need the token even on a new public repo
        _api(server, token=False).create_repo("org/other", repo_type="dataset")
    assert exc.value.response.status_code == 401


def test_resolve_serves_etag_commit_and_ranges(server, tmp_path, hub_client):
    from huggingface_hub import hf_hub_download

    sha = _seed(server)
    content = bytes(range(256)) * 64
    url = f"{server.url}/datasets/org/r/resolve/{sha}/data/train-00000-of-00001.parquet"
    head = urllib.request.urlopen(urllib.request.Request(url, method="HEAD"))
    assert head.headers["X-Repo-Commit"] == sha
    assert head.headers["X-Linked-Etag"].strip('"') == hashlib.sha256(content).hexdigest()
    assert int(head.headers["X-Linked-Size"]) == len(content)
    part = urllib.request.urlopen(urllib.request.Request(url, headers={"Range": "bytes=100-299"}))
    assert part.status == 206 and part.read() == content[100:300]
    assert part.headers["Content-Range"] == f"bytes 100-299/{len(content)}"
    tail = urllib.request.urlopen(urllib.request.Request(url, headers={"Range": "bytes=-10"}))
    assert tail.read() == content[-10:]
    with pytest.raises(urllib.error.HTTPError) as exc:
        urllib.request.urlopen(urllib.request.Request(url, headers={"Range": f"bytes={len(content)}-"}))
    assert exc.value.code == 416
    path = hf_hub_download(
        "org/r",
        "data/train-00000-of-00001.parquet",
        repo_type="dataset",
        revision="main",
        endpoint=server.url,
        token=TOKEN,
        cache_dir=tmp_path,
    )
    with open(path, "rb") as fh:
        assert fh.read() == content and f"/snapshots/{sha}/" in path


def test_unknown_revision_and_file_are_reported_as_such(server, tmp_path, hub_client):
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import EntryNotFoundError, RevisionNotFoundError

    _seed(server)
    with pytest.raises(RevisionNotFoundError):
        _api(server).repo_info("org/r", repo_type="dataset", revision="nope")
    with pytest.raises(EntryNotFoundError):
        hf_hub_download(
            "org/r", "missing.txt", repo_type="dataset", endpoint=server.url, token=TOKEN, cache_dir=tmp_path
        )


def test_branches_and_pull_requests_resolve_by_name_and_sha(server, hub_client):
    from huggingface_hub import CommitOperationAdd

    first = _seed(server)
    api = _api(server)
    api.create_branch("org/r", branch="dev", repo_type="dataset")
    on_dev = api.create_commit(
        "org/r",
        [CommitOperationAdd("dev.txt", b"d")],
        commit_message="dev",
        repo_type="dataset",
        revision="dev",
    )
    pr = api.create_commit(
        "org/r",
        [CommitOperationAdd("pr.txt", b"p")],
        commit_message="proposal",
        repo_type="dataset",
        create_pr=True,
    )
    assert pr.pr_url.endswith("/discussions/1") and pr.pr_revision == "refs/pr/1"
    assert api.repo_info("org/r", repo_type="dataset").sha == first  # main untouched by both
    assert "dev.txt" in api.list_repo_files("org/r", repo_type="dataset", revision="dev")
    assert "pr.txt" in api.list_repo_files("org/r", repo_type="dataset", revision="refs/pr/1")
    assert "pr.txt" not in api.list_repo_files("org/r", repo_type="dataset", revision=on_dev.oid)
    refs = api.list_repo_refs("org/r", repo_type="dataset", include_pull_requests=True)
    assert {b.name: b.target_commit for b in refs.branches} == {"main": first, "dev": on_dev.oid}
    assert [p.ref for p in refs.pull_requests] == ["refs/pr/1"]
