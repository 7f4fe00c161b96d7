"""The local Hub server stores only what the Hub would, parses each card once within limits, and
leaves nothing behind: forbidden paths, card metadata, delete_repo, temporaries, logs, listings,
and the request-parsing edges (duplicate Content-Length, chunk sizes, U+2028, summary size, Host)."""

from __future__ import annotations

import base64
import fcntl
import itertools
import json
import os
import re
import time
from pathlib import Path

import pytest

pytest.importorskip("spl_hf_hub_server", reason="the local Hub server is the [server] extra")
from spl_hf_hub_server.store import SWEEP_MIN_AGE_S

from tests import procs
from tests.hub_fixtures import TOKEN, HubProcess
from tests.test_hub_server import _HEADER, _X, _api, _commit_raw, _exchange, _line, _raw, _seed, _status_of

DEEP_README = b"---\nx: " + b"[" * 2000 + b"]" * 2000 + b"\n---\n# deep\n"  # the review's 4 KB card
NESTED_README = b"---\n" + b"".join(b"  " * i + b"k:\n" for i in range(100)) + b"  " * 100 + b"v\n---\n"


@pytest.fixture
def server(tmp_path):
    from spl_hf_hub_server import RunningServer

    with RunningServer(str(tmp_path / "root"), token=TOKEN) as running:
        yield running


def _repo_dir(hub_or_root, repo: str = "org/r") -> Path:
    """A repo's folder in the store of a running server (or under a root folder)."""
    root = Path(hub_or_root.httpd.config.root) if hasattr(hub_or_root, "httpd") else Path(hub_or_root)
    return root / "repos" / "datasets" / repo


def _post(hub, path: str, body: bytes, extra: str = "") -> tuple[int, dict]:
    status, _, data = _exchange(
        hub,
        f"POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n{extra}"
        f"Content-Length: {len(body)}\r\n\r\n".encode()
        + body,
    )
    return status, json.loads(data or b"{}")


# -- only what the Hub would store ------------------------------------------------------------------


@pytest.mark.parametrize(
    "op",
    [
        _line("file", path=".git/config", content=_X, encoding="base64"),
        _line("file", path="sub/.git/hooks/post-checkout", content=_X, encoding="base64"),
        _line("file", path=".cache/huggingface/download/x.txt.metadata", content=_X, encoding="base64"),
        _line("lfsFile", path=".git/objects/pack/p.pack", algo="sha256", oid="0" * 64),
        _line("deletedFile", path=".git/config"),
        _line("deletedFolder", path=".cache/"),
    ],
)
def test_git_and_cache_paths_are_refused_by_the_commit_route(server, hub_client, op):
    head = _seed(server)
    status, error = _commit_raw(server, f"{_HEADER}\n{op}".encode())
    assert status == 422 and "never stored" in error
    assert _api(server).repo_info("org/r", repo_type="dataset").sha == head  # nothing moved


def test_git_and_cache_paths_are_refused_by_preupload(server, hub_client):
    _seed(server)
    for path in (".git/config", "a/.cache/x"):
        body = json.dumps({"files": [{"path": path, "size": 1, "sample": _X}]}).encode()
        status, out = _post(server, "/api/datasets/org/r/preupload/main", body)
        assert status == 422 and "never stored" in out["error"], out


def test_a_planted_git_config_never_reaches_a_git_checkout(server, tmp_path, hub_client):
    """The review's repro: a raw commit of .git/config, then snapshot_download into a git checkout."""
    from huggingface_hub import snapshot_download
    from spl_hf_hub_server import Store
    from spl_hf_hub_server.store import FileEntry, git_blob_id

    _seed(server)
    poison = b"[core]\n\tfsmonitor = touch PWNED\n"
    op = _line("file", path=".git/config", content=base64.b64encode(poison).decode(), encoding="base64")
    assert _commit_raw(server, f"{_HEADER}\n{op}".encode())[0] == 422
    # A store written before the check holds the path: it is never served, so never downloaded.
    store, repo = Store(server.httpd.config.root), _repo_dir(server)
    head = store.resolve("dataset", "org/r", "main")
    tree = dict(store.commit("dataset", "org/r", head).tree)
    oid = store._put_bytes(repo, poison)
    tree[".git/config"] = FileEntry(".git/config", oid, len(poison), False, git_blob_id(poison))
    planted = store._write_commit(repo, [head], "planted", "", tree)
    refs = json.loads((repo / "refs.json").read_text())
    refs["heads"]["main"] = planted
    (repo / "refs.json").write_text(json.dumps(refs))
    checkout = tmp_path / "checkout"
    procs.run(["git", "init", "-q", str(checkout)], check=True, timeout=300, text=False, capture_output=False)
    config_before = (checkout / ".git" / "config").read_bytes()
    snapshot_download("org/r", repo_type="dataset", local_dir=checkout, endpoint=server.url, token=TOKEN)
    assert (checkout / ".git" / "config").read_bytes() == config_before
    assert (checkout / "README.md").is_file()  # the download itself happened
    assert ".git/config" not in _api(server).list_repo_files("org/r", repo_type="dataset")
    status, _, _ = _exchange(
        server,
        f"GET /datasets/org/r/resolve/main/.git/config HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n\r\n".encode(),
    )
    assert status == 404


# -- card metadata: parsed once, with limits ----------------------------------------------------------


def test_card_data_is_recorded_with_the_commit_and_never_reparsed(server, hub_client):
    api = _api(server)
    head = _seed(server)
    commit_file = _repo_dir(server) / "commits" / f"{head}.json"
    assert json.loads(commit_file.read_text())["cardData"] == {"license": "mit"}
    # Swap the README blob on disk: repo info still answers what was parsed at commit time.
    readme_oid = json.loads(commit_file.read_text())["tree"]["README.md"]["oid"]
    (_repo_dir(server) / "blobs" / readme_oid).write_bytes(DEEP_README)
    assert api.dataset_info("org/r").card_data.license == "mit"
    # A commit that leaves the README alone carries the parent's cardData without reading it.
    from huggingface_hub import CommitOperationAdd

    second = api.create_commit(
        "org/r", [CommitOperationAdd("x.txt", b"x")], commit_message="x", repo_type="dataset"
    )
    assert json.loads((_repo_dir(server) / "commits" / f"{second.oid}.json").read_text())["cardData"] == {
        "license": "mit"
    }


@pytest.mark.parametrize(
    "readme, reason",
    [
        (DEEP_README, "deeper than|nesting depth"),  # the C parser's own flow limit may speak first
        (NESTED_README, "deeper than 64"),
        (b"---\na: &x [1, 2]\nb: *x\n---\n", "alias"),
        (b"---\n" + b"k: v\n" * 220_000 + b"---\n", "larger than"),
        (b"---\na: [1, 2\n---\n", "not valid YAML"),
        (b"---\n- a\n- b\n---\n", "mapping"),
        (b"---\na: 1\n", "not closed"),
    ],
)
def test_a_readme_whose_metadata_breaks_the_limits_is_refused_quickly(server, hub_client, readme, reason):
    from huggingface_hub import CommitOperationAdd

    api = _api(server)
    head = _seed(server)
    started = time.perf_counter()
    op = _line("file", path="README.md", content=base64.b64encode(readme).decode(), encoding="base64")
    status, error = _commit_raw(server, f"{_HEADER}\n{op}".encode())  # straight to the commit route
    assert status == 400 and error.startswith("Invalid metadata in README.md") and re.search(reason, error)
    # The client asks /api/validate-yaml first, which answers through the same reader.
    with pytest.raises((ValueError, OSError), match="Invalid metadata in README.md") as err:
        api.create_commit(
            "org/r", [CommitOperationAdd("README.md", readme)], commit_message="c", repo_type="dataset"
        )
    assert re.search(reason, str(err.value))
    assert time.perf_counter() - started < 20  # was: a RecursionError 500 after a minute
    assert api.dataset_info("org/r").sha == head


def test_an_older_commit_without_recorded_card_data_is_read_within_the_limits(server, hub_client):
    head = _seed(server)
    commit_file = _repo_dir(server) / "commits" / f"{head}.json"
    body = json.loads(commit_file.read_text())
    del body["cardData"]  # as a store from before cardData was recorded
    readme_oid = body["tree"]["README.md"]["oid"]
    commit_file.write_text(json.dumps(body))
    assert _api(server).dataset_info("org/r").card_data.license == "mit"
    (_repo_dir(server) / "blobs" / readme_oid).write_bytes(DEEP_README)
    from spl_hf_hub_server import RunningServer

    with RunningServer(server.httpd.config.root, token=TOKEN) as fresh:  # no in-memory copy yet
        started = time.perf_counter()
        status, _, body = _exchange(
            fresh,
            f"GET /api/datasets/org/r HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n\r\n".encode(),
        )
        assert status == 200 and json.loads(body)["cardData"] is None
        assert time.perf_counter() - started < 10


def test_validate_yaml_uses_the_same_reader(server):
    status, out = _post(
        server, "/api/validate-yaml", json.dumps({"content": NESTED_README.decode()}).encode()
    )
    assert status == 400 and "deeper than" in out["errors"][0]["message"]
    status, out = _post(
        server, "/api/validate-yaml", json.dumps({"content": "---\nlicense: mit\n---\n"}).encode()
    )
    assert status == 200 and out == {"warnings": []}


# -- delete_repo ---------------------------------------------------------------------------------------


def test_delete_repo_on_a_missing_repo_or_the_wrong_type_is_the_hubs_404(server, hub_client):
    from huggingface_hub.errors import RepositoryNotFoundError

    api = _api(server)
    _seed(server, "org/pub")
    with pytest.raises(RepositoryNotFoundError):
        api.delete_repo("org/nope", repo_type="dataset")
    api.delete_repo("org/nope", repo_type="dataset", missing_ok=True)
    api.delete_repo("org/pub", repo_type="model", missing_ok=True)  # a dataset of that name stays
    assert api.repo_exists("org/pub", repo_type="dataset")
    api.delete_repo("org/pub", repo_type="dataset")
    assert not api.repo_exists("org/pub", repo_type="dataset")


# -- temporaries of killed writers ---------------------------------------------------------------------


def _plant_temporaries(repo: Path) -> list[Path]:
    """What SIGKILL mid-commit or mid-upload leaves: fresh (age 0), unlocked temporary files."""
    files = [
        repo / "blobs" / f".{'b' * 64}.x1y2z3",
        repo / "commits" / f".{'c' * 40}.json.k9",
        repo / ".refs.json.q1",
        repo / "tmp" / "upload-young",
    ]
    for f in files:
        f.write_bytes(b"z" * 5000)
    return files


def test_a_server_alone_on_its_root_sweeps_every_temporary_at_start_even_young_ones(tmp_path, hub_client):
    from spl_hf_hub_server import RunningServer

    root = tmp_path / "root"
    with RunningServer(str(root), token=TOKEN) as hub:
        _seed(hub)
    repo = _repo_dir(root)
    planted = _plant_temporaries(repo)
    kept = [repo / ".lock", repo / "refs.json", repo / "meta.json"]
    with RunningServer(str(root), token=TOKEN) as hub:
        assert not [p for p in planted if p.exists()]
        assert all(p.exists() for p in kept)
        assert _api(hub).repo_info("org/r", repo_type="dataset").sha


def test_with_another_server_on_the_root_only_old_unlocked_temporaries_go(tmp_path, hub_client):
    from spl_hf_hub_server import RunningServer

    root = tmp_path / "root"
    with RunningServer(str(root), token=TOKEN) as first:
        _seed(first)
        young, old, held = _plant_temporaries(_repo_dir(root))[:3]
        past = time.time() - SWEEP_MIN_AGE_S - 5
        os.utime(old, (past, past))
        os.utime(held, (past, past))
        fd = os.open(held, os.O_RDONLY)
        fcntl.flock(fd, fcntl.LOCK_EX)  # a writer still at work (in any process)
        try:
            with RunningServer(str(root), token=TOKEN):
                assert young.exists() and held.exists() and not old.exists()
        finally:
            os.close(fd)


# -- logs ------------------------------------------------------------------------------------------


def test_a_query_string_token_never_reaches_the_verbose_log(tmp_path):
    hub = HubProcess(tmp_path / "root", args=("--verbose",)).start()
    try:
        status, _, _ = _exchange(
            hub, b"GET /api/datasets?token=SECRET-IN-QUERY-42&limit=5 HTTP/1.1\r\nHost: x\r\n\r\n"
        )
        status2, _, _ = _exchange(
            hub, b"GET /api/datasets/org/r?sig=abc&expand=true HTTP/1.1\r\nHost: x\r\n\r\n"
        )
    finally:
        hub.stop()
    log = hub.log.read_text()
    assert status == 200 and status2 == 404
    assert "SECRET-IN-QUERY-42" not in log and "sig=abc" not in log
    assert "token=<redacted>&limit=5" in log  # the request line is still there to read


# -- listings --------------------------------------------------------------------------------------


def test_tree_expand_names_each_paths_last_commit_in_one_walk(server, hub_client):
    """Against a brute-force oracle; 60 files x 60 commits answers at once (was: files x commits
    full-tree comparisons per path, 6.6 s for 154 x 154)."""
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete

    api = _api(server)
    api.create_repo("org/t", repo_type="dataset")
    for i in range(60):
        ops = [CommitOperationAdd(f"d{i % 5}/s{i % 3}/f{i:02d}.txt", b"%d" % i)]
        if i % 10 == 9:
            j = i - 9  # an earlier file changes again
            ops.append(CommitOperationAdd(f"d{j % 5}/s{j % 3}/f{j:02d}.txt", b"edit %d" % i))
        if i == 59:
            ops.append(CommitOperationDelete("d1/s1/f01.txt"))
        api.create_commit("org/t", ops, commit_message=f"c{i}", repo_type="dataset")
    started = time.perf_counter()
    listed = list(api.list_repo_tree("org/t", repo_type="dataset", recursive=True, expand=True))
    assert time.perf_counter() - started < 5
    history = [c.title for c in api.list_repo_commits("org/t", repo_type="dataset")]  # newest first
    trees = {}
    for c in api.list_repo_commits("org/t", repo_type="dataset"):
        files = api.list_repo_tree("org/t", repo_type="dataset", revision=c.commit_id, recursive=True)
        trees[c.title] = {
            f.path: getattr(f, "blob_id", None) for f in files if f.__class__.__name__ == "RepoFile"
        }

    def oracle(path: str) -> str:
        def state(title):
            return sorted((p, b) for p, b in trees[title].items() if p == path or p.startswith(path + "/"))

        for newer, older in itertools.pairwise(history):
            if state(newer) != state(older):
                return newer
        return history[-1]

    assert len(listed) == 60 - 1 + 5 + 15
    assert {e.path: e.last_commit.title for e in listed} == {e.path: oracle(e.path) for e in listed}


# -- request parsing ---------------------------------------------------------------------------------


def test_two_different_content_lengths_are_refused(server, hub_client):
    _seed(server)
    body = f"{_HEADER}\n" + _line("file", path="a.txt", content=_X, encoding="base64")
    status, _, _ = _exchange(
        server,
        f"POST /api/datasets/org/r/commit/main HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
        f"Content-Length: {len(body)}\r\nContent-Length: 5\r\n\r\n{body}".encode(),
    )
    assert status == 400
    assert "a.txt" not in _api(server).list_repo_files("org/r", repo_type="dataset")


@pytest.mark.parametrize("size_line", [b"f" * 40, b"zz", b"-1", b"1" * 2000])
def test_a_malformed_chunk_size_is_a_400_not_a_dropped_connection(server, hub_client, size_line):
    _seed(server)
    sock = _raw(
        server,
        f"POST /api/datasets/org/r/commit/main HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
        "Transfer-Encoding: chunked\r\n\r\n".encode()
        + size_line
        + b"\r\nabc\r\n",
    )
    sock.settimeout(10)
    try:
        assert _status_of(sock) == 400
    finally:
        sock.close()


def test_a_summary_with_a_unicode_line_separator_commits_and_a_huge_one_is_refused(server, hub_client):
    from huggingface_hub import CommitOperationAdd
    from huggingface_hub.errors import HfHubHTTPError

    api = _api(server)
    _seed(server)
    title = "line\u2028separated\u0085title"  # raw in the body: the client escapes them, a raw sender may not
    header = json.dumps({"key": "header", "value": {"summary": title}}, ensure_ascii=False)
    status, _ = _commit_raw(
        server, f"{header}\n{_line('file', path='a.txt', content=_X, encoding='base64')}".encode()
    )
    assert status == 200 and api.list_repo_commits("org/r", repo_type="dataset")[0].title == title
    with pytest.raises(HfHubHTTPError) as err:
        api.create_commit(
            "org/r", [CommitOperationAdd("b.txt", b"b")], commit_message="s" * 5000, repo_type="dataset"
        )
    assert err.value.response.status_code == 400 and "summary" in str(err.value)


def test_lfs_hrefs_name_the_server_not_the_host_header(server, hub_client):
    _seed(server)
    body = json.dumps({"operation": "upload", "objects": [{"oid": "a" * 64, "size": 3}]}).encode()
    status, _, data = _exchange(
        server,
        f"POST /datasets/org/r.git/info/lfs/objects/batch HTTP/1.1\r\nHost: evil.example:80\r\n"
        f"Authorization: Bearer {TOKEN}\r\nContent-Length: {len(body)}\r\n\r\n".encode()
        + body,
    )
    href = json.loads(data)["objects"][0]["actions"]["upload"]["href"]
    assert status == 200 and href.startswith(server.url + "/__lfs/") and "evil" not in data.decode()
