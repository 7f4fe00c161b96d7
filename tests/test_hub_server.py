"""The local Hub server: persistence, atomic commits under SIGKILL, auth, 412, Range/ETag."""

from __future__ import annotations

import contextlib
import hashlib
import json
import socket
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

import pytest

pytest.importorskip("spl_hf_hub_server", reason="the local Hub server is the [server] extra")
from spl_hf_hub_server.store import SWEEP_MIN_AGE_S

from tests.hub_fixtures import TOKEN, HubProcess


@pytest.fixture
def server(tmp_path):
    """The server on a thread of this process (fast); the kill test uses a real process."""
    from spl_hf_hub_server import RunningServer

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


def _wait_for_partial(tmp: Path) -> list[Path]:
    """The partial upload files in a repo's ``tmp/`` once the server has begun writing one."""
    for _ in range(200):
        found = [p for p in tmp.iterdir() if p.name.startswith("upload-")] if tmp.is_dir() else []
        if found:
            return found
        time.sleep(0.025)
    return []


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
    tmp = server_process.root / "repos" / "datasets" / "org" / "r" / "tmp"
    assert len(_wait_for_partial(tmp)) == 1  # the upload is under way: its partial blob exists
    server_process.kill()
    commit_sock.close()
    upload_sock.close()
    time.sleep(SWEEP_MIN_AGE_S + 0.2)
    server_process.start()  # same root, new process and port
    assert list(tmp.iterdir()) == []  # removed at start-up: nothing is left to grow forever
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


# -- a network service: every client is hostile ------------------------------------------------------


def _exchange(hub, request: bytes, timeout: float = 10.0) -> tuple[int, list[tuple[str, str]], bytes]:
    """One raw request; the status, the header lines as (name, value) and the body that came."""
    sock = _raw(hub, request)
    sock.settimeout(timeout)
    data = b""
    try:
        while True:
            block = sock.recv(65536)
            if not block:
                break
            data += block
            head, sep, body = data.partition(b"\r\n\r\n")
            length = [ln for ln in head.split(b"\r\n") if ln.lower().startswith(b"content-length:")]
            if sep and length and len(body) >= int(length[0].split(b":")[1]):
                break
    finally:
        sock.close()
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = [tuple(part.strip() for part in ln.split(":", 1)) for ln in lines[1:] if ":" in ln]
    return int(lines[0].split()[1]), headers, body


def _status_of(sock) -> int | None:
    """The status a server sent on ``sock`` (None when it closed without answering)."""
    data = b""
    while b"\r\n" not in data:
        block = sock.recv(4096)
        if not block:
            return None
        data += block
    return int(data.split()[1])


@pytest.mark.parametrize(
    "target",
    [
        "/datasets/org/r/resolve/main/x%0d%0aSet-Cookie:%20injected=1",
        "/datasets/org/r/resolve/x%0d%0aSet-Cookie:%20injected=1/a.txt",
        "/api/datasets/org/r/revision/x%0aSet-Cookie:%20injected=1",
        "/api/datasets/org/r/tree/main/x%0d%0a%0d%0aSet-Cookie:%20injected=1",
    ],
)
def test_crlf_in_a_path_or_revision_never_reaches_a_response_header(server, hub_client, target):
    _seed(server)
    status, headers, body = _exchange(server, f"GET {target} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    assert status == 404
    names = [k.lower() for k, _ in headers]
    assert "set-cookie" not in names and names.count("x-error-message") == 1
    message = dict((k.lower(), v) for k, v in headers)["x-error-message"]
    assert "%0A" in message and all(0x20 <= ord(c) < 0x7F for c in message)
    assert "Set-Cookie" in json.loads(body)["error"]  # the body carries the message, JSON-escaped


def test_an_unauthenticated_body_is_refused_before_it_is_read(server_process, tmp_path):
    """A 400 MB claimed body without a token: 401 at once, and the server's memory does not grow."""

    def rss_kb() -> int:
        status = Path(f"/proc/{server_process.proc.pid}/status").read_text()
        return int(status.split("VmRSS:")[1].split()[0])

    before = rss_kb()
    routes = {  # writes: 401; public reads that take a body: 413 over the small anonymous cap
        "/api/datasets/org/r/commit/main": 401,
        "/api/repos/create": 401,
        "/api/datasets/org/r/preupload/main": 401,
        "/api/datasets/org/r/paths-info/main": 413,
        "/datasets/org/r.git/info/lfs/objects/batch": 413,
    }
    for route, status in routes.items():
        sock = _raw(
            server_process, f"POST {route} HTTP/1.1\r\nHost: x\r\nContent-Length: 400000000\r\n\r\n".encode()
        )
        sock.settimeout(10)
        assert _status_of(sock) == status  # answered with no byte of the body sent: it was not waited for
        with contextlib.suppress(OSError):  # the server has closed the connection: sending fails
            sock.sendall(b"x" * (4 << 20))
        sock.close()
    assert rss_kb() - before < 4 * 1024, (before, rss_kb())
    # With the token, a body over the route's cap is 413 (not read either), in the Hub's error shape.
    status, headers, body = _exchange(
        server_process,
        f"POST /api/repos/create HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
        f"Content-Length: 10000000000\r\n\r\n".encode(),
    )
    assert status == 413 and "larger than" in json.loads(body)["error"]
    assert ("Connection", "close") in headers


def test_a_stalled_connection_is_closed_after_the_idle_timeout(tmp_path):
    import time

    from spl_hf_hub_server import RunningServer

    with RunningServer(str(tmp_path / "root"), token=TOKEN, idle_timeout_s=0.5) as hub:
        stalled = [
            _raw(hub, b"GET /api/datasets/org/r HTTP/1.1\r\nHost: x\r\n"),  # headers never end
            _raw(
                hub,
                f"POST /api/repos/create HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
                "Content-Length: 1000\r\n\r\n{".encode(),  # a body that never comes
            ),
        ]
        start = time.monotonic()
        for sock in stalled:
            sock.settimeout(10)
            while sock.recv(4096):  # whatever it answers, the server ends the connection
                pass
            sock.close()
        assert time.monotonic() - start < 5


def test_headers_trickled_a_byte_at_a_time_are_cut_off_at_the_header_deadline(tmp_path):
    from spl_hf_hub_server import RunningServer

    with RunningServer(str(tmp_path / "root"), token=TOKEN, header_timeout_s=1.0, idle_timeout_s=30) as hub:
        sock = _raw(hub, b"G")
        start, closed = time.monotonic(), False
        for byte in b"ET /api/datasets/org/r HTTP/1.1\r\nX-Slow: " + b"a" * 100:  # never idle 30 s
            time.sleep(0.1)
            try:
                sock.sendall(bytes([byte]))
            except OSError:
                closed = True
                break
        sock.settimeout(5)
        closed = closed or sock.recv(4096) == b""
        sock.close()
        assert closed and time.monotonic() - start < 5


def test_stalled_connections_do_not_grow_threads_past_the_bound(tmp_path):
    import threading

    from spl_hf_hub_server import RunningServer

    with RunningServer(str(tmp_path / "root"), token=TOKEN, max_connections=4, idle_timeout_s=30) as hub:
        base = threading.active_count()
        socks = [_raw(hub, b"GET /api/datasets/org/r HTTP/1.1\r\nHost: x\r\n") for _ in range(40)]
        refused = 0
        for sock in socks[4:]:
            sock.settimeout(10)
            refused += _status_of(sock) == 503
        assert refused == 36  # every connection over the bound is answered 503 and closed, not held
        assert threading.active_count() - base <= 4
        for sock in socks:
            sock.close()
        for _ in range(100):  # the slots come back once the stalled clients are gone
            if threading.active_count() <= base:
                break
            threading.Event().wait(0.05)
        status, _, body = _exchange(hub, b"GET /api/datasets/org/nope HTTP/1.1\r\nHost: x\r\n\r\n")
        assert status == 404 and json.loads(body)["error"] == "Repository not found"


def _commit_raw(hub, body: bytes) -> tuple[int, str]:
    status, _, data = _exchange(
        hub,
        f"POST /api/datasets/org/r/commit/main HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
        f"Content-Type: application/x-ndjson\r\nContent-Length: {len(body)}\r\n\r\n".encode()
        + body,
    )
    return status, json.loads(data)["error"] if status != 200 else ""


def _line(key: str, **value) -> str:
    return json.dumps({"key": key, "value": value})


_HEADER = _line("header", summary="s")
_X = "eA=="  # base64 of b"x"


@pytest.mark.parametrize(
    "body, status, reason",
    [
        ("[1]", 400, "expected"),
        ('{"key":"header","value":"str"}', 400, "expected"),
        (f'{_HEADER}\n{{"key":"file","value":"str"}}', 400, "line 2"),
        (f"{_HEADER}\n5", 400, "line 2"),
        (f"{_HEADER}\n" + "[" * 100_000, 400, "not valid JSON"),
        (_line("header", summary={"a": 1}), 400, "summary"),
        (_line("header", summary="s", parentCommit="zz"), 400, "parentCommit"),
        (
            f"{_HEADER}\n" + _line("file", path=5, content=_X, encoding="base64"),
            400,
            "'path' must be a string",
        ),
        (f"{_HEADER}\n" + _line("file", path="a.txt", content="!!", encoding="base64"), 400, "base64"),
        (f"{_HEADER}\n" + _line("lfsFile", path="a.bin", algo="sha256", oid="0" * 64), 422, "not uploaded"),
        (f"{_HEADER}\n" + _line("copyFile", path="a"), 400, "unsupported operation"),
        (
            f"{_HEADER}\n"
            + _line("file", path="x.txt", content=_X, encoding="base64")
            + "\n"
            + _line("file", path="x.txt/y", content=_X, encoding="base64"),
            422,
            "both a file and a folder",
        ),
        (
            f"{_HEADER}\n" + _line("file", path="data", content=_X, encoding="base64"),
            422,
            "both a file and a folder",
        ),
        (
            f"{_HEADER}\n" + _line("file", path="/tmp/PWN", content=_X, encoding="base64"),
            422,
            "starts with '/'",
        ),
        (f"{_HEADER}\n" + _line("file", path="a/../b", content=_X, encoding="base64"), 422, "'..'"),
        (f"{_HEADER}\n" + _line("file", path="a//b", content=_X, encoding="base64"), 422, "empty"),
        (f"{_HEADER}\n" + _line("file", path="a\\b", content=_X, encoding="base64"), 422, "backslash"),
        (f"{_HEADER}\n" + _line("file", path="a\nb", content=_X, encoding="base64"), 422, "control"),
    ],
)
def test_a_malformed_commit_is_refused_with_its_reason_and_stores_nothing(
    server, hub_client, body, status, reason
):
    head = _seed(server)
    got, message = _commit_raw(server, body.encode())
    assert (got, reason in message) == (status, True), message
    api = _api(server)
    assert api.repo_info("org/r", repo_type="dataset").sha == head


def test_fuzzed_commits_never_get_500_and_leave_the_store_unchanged(server, hub_client):
    import random

    head = _seed(server)
    repo = next((server.httpd.store.root / "repos").glob("datasets/org/r"))
    blobs = sorted(p.name for p in (repo / "blobs").iterdir())
    rng = random.Random(17)
    values = [
        None,
        5,
        -1,
        1.5,
        True,
        "",
        "x",
        "/a",
        "a/../b",
        "a//b",
        "x.txt/y",
        [],
        {},
        [1],
        {"a": 1},
        "\r\n",
    ]
    keys = ["header", "file", "lfsFile", "deletedFile", "deletedFolder", "copy", "", 7]
    fields = ["summary", "path", "content", "encoding", "oid", "algo", "size", "parentCommit", "description"]
    statuses = set()
    for _ in range(300):
        lines = [] if rng.random() < 0.2 else [_HEADER]
        for _ in range(rng.randrange(0, 4)):
            value = {rng.choice(fields): rng.choice(values) for _ in range(rng.randrange(0, 5))}
            obj = rng.choice([{"key": rng.choice(keys), "value": value}, value, rng.choice(values)])
            text = json.dumps(obj)
            if rng.random() < 0.1:
                text = text[: rng.randrange(0, len(text) + 1)]  # cut short
            lines.append(text)
        # Always one invalid operation somewhere, so that no fuzzed commit may be stored at all.
        bad = _line(
            "file",
            path=rng.choice(["/z", "a//b", "..", "x\\y", "data/train-00000-of-00001.parquet/y"]),
            content=_X,
        )
        lines.insert(rng.randrange(min(1, len(lines)), len(lines) + 1), bad)
        status, _ = _commit_raw(server, "\n".join(lines).encode())
        statuses.add(status)
    assert statuses <= {400, 404, 422}, statuses
    assert _api(server).repo_info("org/r", repo_type="dataset").sha == head
    assert sorted(p.name for p in (repo / "blobs").iterdir()) == blobs


def test_partial_uploads_are_swept_but_a_running_upload_is_not(tmp_path, hub_client):
    import os

    from spl_hf_hub_server import RunningServer

    with RunningServer(str(tmp_path / "root"), token=TOKEN, tmp_sweep_interval_s=0.2) as hub:
        _seed(hub)
        tmp = tmp_path / "root" / "repos" / "datasets" / "org" / "r" / "tmp"
        abandoned = tmp / "upload-killed"  # as a killed server process leaves it: nobody holds its lock
        abandoned.write_bytes(b"p" * 1000)
        os.utime(abandoned, (time.time() - 60, time.time() - 60))
        blob = b"z" * 100_000
        href = urlsplit(_lfs_batch(hub, blob))
        running = _raw(
            hub,
            f"PUT {href.path}?{href.query} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(blob)}\r\n\r\n".encode()
            + blob[:5000],
        )
        for _ in range(100):
            if not abandoned.exists():
                break
            time.sleep(0.05)
        assert not abandoned.exists()
        (partial,) = _wait_for_partial(tmp)
        time.sleep(SWEEP_MIN_AGE_S + 0.5)  # old enough to be swept, had its writer gone
        assert partial.exists()
        running.sendall(blob[5000:])
        running.settimeout(10)
        assert _status_of(running) == 200
        running.close()
        assert list(tmp.iterdir()) == []
        assert _lfs_batch(hub, blob) is None  # stored whole


def test_the_token_comes_from_the_environment_or_a_file_never_from_argv(tmp_path, hub_client):
    from huggingface_hub.errors import HfHubHTTPError

    env_hub = HubProcess(tmp_path / "a").start()
    try:
        cmdline = Path(f"/proc/{env_hub.proc.pid}/cmdline").read_bytes()
        assert TOKEN.encode() not in cmdline
        _api(env_hub).create_repo("org/x", repo_type="dataset")
    finally:
        env_hub.stop()
    (tmp_path / "token").write_text("from-a-file-77\n")
    file_hub = HubProcess(tmp_path / "b", token=None, args=("--token_file", str(tmp_path / "token"))).start()
    try:
        _api(file_hub, token="from-a-file-77").create_repo("org/x", repo_type="dataset")
        with pytest.raises(HfHubHTTPError) as exc:
            _api(file_hub, token=TOKEN).create_repo("org/y", repo_type="dataset")
        assert exc.value.response.status_code == 401
    finally:
        file_hub.stop()
    argv_hub = HubProcess(tmp_path / "c", token=None, args=("--token", "argv-token-1")).start()
    argv_hub.stop()
    log = argv_hub.log.read_text()
    assert "visible to other users in the process list" in log and "argv-token-1" not in log


def test_the_calls_users_reach_for_first_work_through_the_unmodified_client(server, tmp_path, hub_client):
    from huggingface_hub import CommitOperationAdd, hf_hub_download
    from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError, RevisionNotFoundError

    first = _seed(server)
    api = _api(server)
    assert api.whoami()["name"] == "local"
    with pytest.raises(HfHubHTTPError) as exc:
        _api(server, token="wrong").whoami()
    assert exc.value.response.status_code == 401
    # Tags: a release is tagged, read at the tag, and the tag removed.
    api.create_tag("org/r", tag="v1", repo_type="dataset", tag_message="first release")
    api.create_commit("org/r", [CommitOperationAdd("b.txt", b"b")], commit_message="b", repo_type="dataset")
    refs = api.list_repo_refs("org/r", repo_type="dataset")
    assert [(t.name, t.target_commit) for t in refs.tags] == [("v1", first)]
    assert "b.txt" not in api.list_repo_files("org/r", repo_type="dataset", revision="v1")
    path = hf_hub_download(
        "org/r",
        "README.md",
        repo_type="dataset",
        revision="v1",
        endpoint=server.url,
        token=TOKEN,
        cache_dir=tmp_path,
    )
    assert f"/snapshots/{first}/" in path
    api.delete_tag("org/r", tag="v1", repo_type="dataset")
    with pytest.raises(RevisionNotFoundError):
        api.repo_info("org/r", repo_type="dataset", revision="v1")
    # Branches: created and deleted (CI cleanup); main cannot be.
    api.create_branch("org/r", branch="ci-1", repo_type="dataset")
    api.delete_branch("org/r", branch="ci-1", repo_type="dataset")
    assert [b.name for b in api.list_repo_refs("org/r", repo_type="dataset").branches] == ["main"]
    # cardData from the README's YAML; list_datasets by author; HEAD on the repo (olah's check).
    assert api.dataset_info("org/r").card_data.license == "mit"
    _seed(server, "other/s")
    assert [d.id for d in api.list_datasets(author="org")] == ["org/r"]
    head = urllib.request.urlopen(urllib.request.Request(f"{server.url}/api/datasets/org/r", method="HEAD"))
    assert head.status == 200 and head.read() == b""
    # Visibility through the settings route: private now hidden from anyone without the token.
    api.update_repo_settings("org/r", private=True, repo_type="dataset")
    with pytest.raises(RepositoryNotFoundError):
        _api(server, token=False).repo_info("org/r", repo_type="dataset")
    assert [d.id for d in _api(server, token=False).list_datasets(author="org")] == []
    # delete_repo, and a route the server lacks answers in the Hub's JSON shape (never an HTML page).
    api.delete_repo("org/r", repo_type="dataset")
    with pytest.raises(RepositoryNotFoundError):
        api.repo_info("org/r", repo_type="dataset")
    with pytest.raises(HfHubHTTPError) as exc:
        api.move_repo("other/s", "other/t", repo_type="dataset")
    assert exc.value.response.status_code == 404 and "no route" in exc.value.response.json()["error"]
    for method in ("PATCH", "DELETE", "OPTIONS"):
        status, headers, body = _exchange(
            server, f"{method} /api/spaces/x HTTP/1.1\r\nHost: x\r\n\r\n".encode()
        )
        assert status in (404, 405) and "error" in json.loads(body)
        assert dict(headers)["Content-Type"].startswith("application/json")
    status, _, body = _exchange(server, b"BREW / HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status == 501 and "Unsupported method" in json.loads(body)["error"]


def test_an_upload_without_disabling_xet_fails_with_the_instruction(server, monkeypatch):
    """hf_xet is installed, so the unmodified client uploads through Xet (it asks the server for
    nothing first, so no answer can turn it to LFS): the failure it shows names the setting."""
    import huggingface_hub.constants

    pytest.importorskip("hf_xet")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_DISABLE_XET", False)
    api = _api(server)
    api.create_repo("org/x", repo_type="dataset")
    with pytest.raises(Exception) as exc:
        api.upload_file(
            path_or_fileobj=b"\0" * 20_000, path_in_repo="x.parquet", repo_id="org/x", repo_type="dataset"
        )
    assert "HF_HUB_DISABLE_XET=1" in str(exc.value)
    assert "x.parquet" not in api.list_repo_files("org/x", repo_type="dataset")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_DISABLE_XET", True)  # as the message says
    api.upload_file(
        path_or_fileobj=b"\0" * 20_000, path_in_repo="x.parquet", repo_id="org/x", repo_type="dataset"
    )
    assert "x.parquet" in api.list_repo_files("org/x", repo_type="dataset")


def test_a_chunked_body_over_its_cap_is_cut_off_with_413(tmp_path):
    from spl_hf_hub_server import RunningServer

    with RunningServer(str(tmp_path / "root"), token=TOKEN, max_json_body=1000) as hub:
        chunk = b"{" + b" " * 4999
        request = (
            f"POST /api/repos/create HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
            "Transfer-Encoding: chunked\r\n\r\n".encode()
            + b"%x\r\n" % len(chunk)
            + chunk
            + b"\r\n0\r\n\r\n"
        )
        status, headers, body = _exchange(hub, request)
        assert status == 413 and ("Connection", "close") in headers
        assert json.loads(body)["error"] == "request body is larger than 1000 bytes"
