"""The Ray executor on a real 2-node Ray cluster on this machine, with results on an S3-compatible server.

`make test-ray` runs these (SPL_HF_TEST_RAY=1; the [test-ray] extra: ray[data], moto[server], s3fs;
minutes); otherwise they are skipped, so `make test` neither needs Ray nor spends its time budget here.

The cluster is two `ray start --block` processes (a head and a worker node, one CPU each), both told
127.0.0.1, and a `moto_server` on 127.0.0.1 stands in for S3. Ray replaces 127.0.0.1 by the machine's
routable address for a multi-node cluster, so `make test-ray` runs this file in a network namespace
with loopback only (`unshare -rn`) where it can; Ray's token authentication is on either way. Each release runs as its own driver
process joining the cluster, so a test can SIGKILL the worker node's raylet, a replica, or the driver.
Every comparison is against the same release run in process (`executor: local`): MANIFEST.sha256 and
the judge shards must be identical.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import procs
from tests.conftest import REPO

if not os.environ.get("SPL_HF_TEST_RAY"):
    pytest.skip("Ray executor tests run in `make test-ray` (SPL_HF_TEST_RAY=1)", allow_module_level=True)
ray = pytest.importorskip("ray")
psutil = pytest.importorskip("psutil")
pytest.importorskip("s3fs")
pytest.importorskip("moto")

pytestmark = [pytest.mark.slow, pytest.mark.model, pytest.mark.ray]
TENETS = REPO / "recipes" / "tenets" / "demo.yaml"
SPL = REPO / "recipes" / "spl" / "demo.yaml"
N_SCORES = 72  # 12 pairs x 6 tenets
N_SHARDS = 6
SHARDS = ["--shard_groups", "2"]  # 6 judge shards of 2 pairs each: a kill can land between them
BIN = Path(sys.executable).parent
BUCKET = "spl-hf-test"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


S3_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",  # moto's fake credentials: no real key is ever used
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
}


class Cluster:
    """A head node and a worker node (`ray start --block`, one CPU each), bound to 127.0.0.1."""

    def __init__(self, env: dict[str, str]) -> None:
        import secrets

        # Ray's token authentication, with a token of this session only (never ~/.ray): every node and
        # driver must present it, so a port reachable from outside still runs nobody else's code.
        self.env = {**env, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}
        self.port = _free_port()
        self.address = f"127.0.0.1:{self.port}"
        # Short paths: Ray's unix sockets live under the temp dir (108-byte limit).
        self.temp = Path(tempfile.mkdtemp(prefix="rt", dir="/tmp"))
        self._stack: list = []
        self.worker: subprocess.Popen | None = None

    def _start(self, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen:
        common = ["--block", "--num-cpus", "1", "--node-ip-address", "127.0.0.1", "--disable-usage-stats"]
        common += ["--object-store-memory", str(200 * 2**20)]
        ctx = procs.started(
            [str(BIN / "ray"), "start", *args, *common],
            env=env or self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            grace_s=15,
        )
        proc = ctx.__enter__()
        self._stack.append(ctx)
        return proc

    def _nodes(self) -> int:
        out = procs.run(
            [
                sys.executable,
                "-c",
                f"import ray; ray.init(address='{self.address}', log_to_driver=False); "
                "print(sum(1 for n in ray.nodes() if n['Alive']))",
            ],
            env=self.env,
            timeout=120,
        )
        return int(out.stdout.strip().splitlines()[-1]) if out.returncode == 0 else 0

    def wait_nodes(self, n: int, timeout: float = 180) -> None:
        deadline = time.monotonic() + timeout
        while self._nodes() != n:
            assert time.monotonic() < deadline, f"the Ray cluster did not reach {n} live nodes"
            time.sleep(1)

    def start(self) -> None:
        head = [
            "--head",
            "--port",
            str(self.port),
            "--include-dashboard",
            "false",
            "--temp-dir",
            str(self.temp),
        ]
        self._start(*head)
        self.add_worker()

    def add_worker(self) -> None:
        self.worker = self._start("--address", self.address, "--temp-dir", str(self.temp))
        self.wait_nodes(2)

    def kill_worker_raylet(self) -> None:
        """SIGKILL the worker node's raylet (the node is lost; its `ray start --block` then exits)."""
        assert self.worker is not None
        raylets = [
            p for p in psutil.Process(self.worker.pid).children(recursive=True) if p.name() == "raylet"
        ]
        assert len(raylets) == 1, raylets
        raylets[0].send_signal(signal.SIGKILL)

    def stop(self) -> None:
        for ctx in reversed(self._stack):
            ctx.__exit__(None, None, None)
        shutil.rmtree(self.temp, ignore_errors=True)


@pytest.fixture(scope="session")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """A moto S3 server on 127.0.0.1 with one bucket; its request log is kept to count requests."""
    port = _free_port()
    log = tmp_path_factory.mktemp("moto") / "requests.log"
    env = {**os.environ, **S3_ENV}
    with (
        log.open("w") as fh,
        procs.started(
            [str(BIN / "moto_server"), "-H", "127.0.0.1", "-p", str(port)], env=env, stdout=fh, stderr=fh
        ),
    ):
        endpoint = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "moto_server did not start"
                time.sleep(0.2)
        import boto3

        boto3.client("s3", endpoint_url=endpoint, **_boto_keys()).create_bucket(Bucket=BUCKET)
        yield {"endpoint": endpoint, "log": log, "env": {**S3_ENV, "AWS_ENDPOINT_URL": endpoint}}


def _boto_keys() -> dict:
    return {
        "aws_access_key_id": S3_ENV["AWS_ACCESS_KEY_ID"],
        "aws_secret_access_key": S3_ENV["AWS_SECRET_ACCESS_KEY"],
        "region_name": S3_ENV["AWS_DEFAULT_REGION"],
    }


def _env(s3: dict) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1", **s3["env"]}


@pytest.fixture(scope="session")
def cluster(s3: dict) -> Iterator[Cluster]:
    c = Cluster(_env(s3))
    try:
        c.start()
        yield c
    finally:
        c.stop()


def _argv(kind: str, recipe: Path, root: Path, *extra: str, run: str | None = None) -> list[str]:
    where = ["--run_dir", run or str(root / "run"), "--output_dir", str(root / "ds"), "--no_progress"]
    cmd = [sys.executable, "-m", "spl_hf.cli", "release", kind, "--config", str(recipe)]
    return [*cmd, *where, *SHARDS, *extra]


def _ray_flags(address: str, replicas: int) -> list[str]:
    return ["--executor", "ray", "--replicas", str(replicas), "--ray_address", address]


def _release(argv: list[str], env: dict, cwd: Path | None = None) -> subprocess.CompletedProcess:
    proc = procs.run(argv, env=env, cwd=cwd, timeout=1500)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def _manifest(root: Path) -> bytes:
    return (root / "ds" / "MANIFEST.sha256").read_bytes()


def _shards(results: Path, kind: str = "judge") -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((results / kind).glob("[!.]*.parquet"))}


def _s3_shards(prefix: str, kind: str = "judge") -> dict[str, bytes]:
    import boto3

    client = boto3.client("s3", endpoint_url=os.environ.get("_SPL_S3_ENDPOINT"), **_boto_keys())
    listing = client.list_objects_v2(Bucket=BUCKET, Prefix=f"{prefix}/{kind}/").get("Contents", [])
    names = [o["Key"] for o in listing if re.fullmatch(r"[0-9a-f]{64}\.parquet", o["Key"].rsplit("/", 1)[-1])]
    return {
        k.rsplit("/", 1)[-1]: client.get_object(Bucket=BUCKET, Key=k)["Body"].read() for k in sorted(names)
    }


def _stage_counts(run: Path, name: str) -> dict:
    report = json.loads((run / "run_report.json").read_text())
    return next(s for s in report["stages"] if s["name"] == name)["counts"]


def _wait(until, proc: subprocess.Popen, what: str, timeout: float = 900) -> None:
    deadline = time.monotonic() + timeout
    while not until():
        assert proc.poll() is None, f"the release ended before {what}"
        assert time.monotonic() < deadline, f"no {what} in time"
        time.sleep(0.2)


@pytest.fixture(scope="session")
def local_tenets(tmp_path_factory: pytest.TempPathFactory, s3: dict) -> Path:
    root = tmp_path_factory.mktemp("local")
    _release(_argv("tenets", TENETS, root), _env(s3))
    return root


@pytest.fixture(autouse=True)
def _s3_endpoint(s3: dict, monkeypatch) -> None:
    monkeypatch.setenv("_SPL_S3_ENDPOINT", s3["endpoint"])


def test_two_nodes_write_the_local_manifest_and_shards(
    local_tenets: Path, cluster: Cluster, tmp_path: Path
) -> None:
    _release(_argv("tenets", TENETS, tmp_path, *_ray_flags(cluster.address, 2)), cluster.env)
    assert _manifest(tmp_path) == _manifest(local_tenets)
    assert _shards(tmp_path / "run" / "results") == _shards(local_tenets / "run" / "results")
    assert len(_shards(tmp_path / "run" / "results")) == N_SHARDS
    assert _stage_counts(tmp_path / "run", "judge")["computed"] == N_SCORES


def _moto_writes(log: Path, prefix: str) -> list[str]:
    """The write requests (PUT, POST, DELETE) moto logged under ``prefix``'s judge folder."""
    pattern = re.compile(rf'"(PUT|POST|DELETE) /{BUCKET}/{re.escape(prefix)}/judge/[^ ]* HTTP')
    return [m.group(1) for m in map(pattern.search, log.read_text().splitlines()) if m]


def test_s3_results_on_two_nodes_one_request_per_shard_and_the_local_manifest(
    local_tenets: Path, cluster: Cluster, s3: dict, tmp_path: Path
) -> None:
    prefix = "two-nodes"
    argv = _argv(
        "tenets",
        TENETS,
        tmp_path,
        *_ray_flags(cluster.address, 2),
        "--results_dir",
        f"s3://{BUCKET}/{prefix}",
    )
    _release(argv, cluster.env)
    assert _manifest(tmp_path) == _manifest(local_tenets)
    assert _s3_shards(prefix) == _shards(local_tenets / "run" / "results")
    writes = _moto_writes(s3["log"], prefix)
    assert writes == ["PUT"] * N_SHARDS, writes  # one PUT per shard: no temporary, copy or delete


def test_a_lost_node_mid_judge_with_s3_results_finishes_or_resumes_to_the_local_manifest(
    local_tenets: Path, cluster: Cluster, tmp_path: Path
) -> None:
    prefix = "lost-node"
    argv = _argv(
        "tenets",
        TENETS,
        tmp_path,
        *_ray_flags(cluster.address, 2),
        "--results_dir",
        f"s3://{BUCKET}/{prefix}",
    )
    try:
        with procs.started(
            argv, env=cluster.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        ) as proc:
            _wait(lambda: len(_s3_shards(prefix)) >= 1, proc, "first judge shard")
            cluster.kill_worker_raylet()
            killed_at = len(_s3_shards(prefix))
            err = proc.communicate(timeout=1500)[1]
        assert killed_at < N_SHARDS, "the kill must land mid-judge"
        print(
            f"lost node: killed with {killed_at} of {N_SHARDS} shards on S3; the run exited {proc.returncode}"
        )
        if proc.returncode != 0:  # refused or failed: the same command must then finish the job
            _release(argv, cluster.env)
        assert _manifest(tmp_path) == _manifest(local_tenets), err[-2000:]
        assert _s3_shards(prefix) == _shards(local_tenets / "run" / "results")
    finally:
        cluster.add_worker()  # the next tests get two nodes again


def test_a_relative_run_folder_is_the_drivers_and_works_on_two_nodes(
    local_tenets: Path, cluster: Cluster, tmp_path: Path
) -> None:
    """The recipes' relative run_dir: resolved on the driver, probed by every node, not the raylets' cwd."""
    _release(
        _argv("tenets", TENETS, tmp_path, *_ray_flags(cluster.address, 2), run="rel/run"),
        cluster.env,
        cwd=tmp_path,
    )
    assert _manifest(tmp_path) == _manifest(local_tenets)
    assert _shards(tmp_path / "rel" / "run" / "results") == _shards(local_tenets / "run" / "results")
    assert not any(cluster.temp.rglob("rel"))  # nothing written where the nodes were started


def test_the_driver_killed_on_s3_and_resumed_on_ray_reads_what_the_replicas_wrote(
    local_tenets: Path, cluster: Cluster, tmp_path: Path
) -> None:
    """The runbook's resume path: a fresh listing after the replicas wrote (was: FileNotFoundError)."""
    prefix = "driver-killed"
    results = ["--results_dir", f"s3://{BUCKET}/{prefix}"]
    argv = _argv("tenets", TENETS, tmp_path, *_ray_flags(cluster.address, 2), *results)
    with procs.started(argv, env=cluster.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as proc:
        _wait(lambda: len(_s3_shards(prefix)) >= 1, proc, "first judge shard")
        procs.kill_group(proc)
        proc.wait()
    time.sleep(2)  # a replica that was writing when its driver died finishes or dies: either is fine
    done = len(_s3_shards(prefix))
    assert 0 < done < N_SHARDS and not (tmp_path / "ds" / "MANIFEST.sha256").exists()

    _release(_argv("tenets", TENETS, tmp_path, *_ray_flags(cluster.address, 2), *results), cluster.env)
    counts = _stage_counts(tmp_path / "run", "judge")
    assert counts["cached"] >= done * 12 and counts["computed"] == N_SCORES - counts["cached"]
    assert _manifest(tmp_path) == _manifest(local_tenets)


def _replica_processes(cluster: Cluster) -> list:
    out = []
    for p in psutil.Process(os.getpid()).children(recursive=True):
        try:
            if "ShardActor" in " ".join(p.cmdline()):
                out.append(p)
        except psutil.NoSuchProcess:
            continue
    return out


def test_a_replica_killed_mid_stage_is_retried_and_the_manifest_holds(
    local_tenets: Path, cluster: Cluster, tmp_path: Path
) -> None:
    argv = _argv("tenets", TENETS, tmp_path, *_ray_flags(cluster.address, 2))
    results = tmp_path / "run" / "results"
    with procs.started(argv, env=cluster.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as proc:
        _wait(lambda: len(_shards(results)) >= 1, proc, "first judge shard")
        replicas = _replica_processes(cluster)
        assert replicas, "no replica process found"
        replicas[0].send_signal(signal.SIGKILL)
        killed_at = len(_shards(results))
        assert proc.wait(timeout=1500) == 0
    assert killed_at < N_SHARDS, "the kill must land mid-stage"
    assert _manifest(tmp_path) == _manifest(local_tenets)
    assert _shards(results) == _shards(local_tenets / "run" / "results")


def test_spl_release_generate_label_and_verdict_on_ray_match_local(cluster: Cluster, tmp_path: Path) -> None:
    _release(_argv("spl", SPL, tmp_path / "local"), cluster.env)
    _release(_argv("spl", SPL, tmp_path / "ray", *_ray_flags(cluster.address, 2)), cluster.env)
    assert _manifest(tmp_path / "ray") == _manifest(tmp_path / "local")
    for kind in ("generate", "label", "verdict"):
        ray_shards = _shards(tmp_path / "ray" / "run" / "results", kind)
        assert ray_shards == _shards(tmp_path / "local" / "run" / "results", kind) != {}
    assert _stage_counts(tmp_path / "ray" / "run", "label")["computed"] > 0


def test_bad_executor_settings_fail_before_any_model_loads(cluster: Cluster, tmp_path: Path) -> None:
    base = _argv("tenets", TENETS, tmp_path)
    for flags, message in (
        (["--executor", "ray", "--ray_address", "127.0.0.1:1"], "cannot connect to the Ray cluster"),
        ([*_ray_flags(cluster.address, 1), "--gpus_per_replica", "1"], "the Ray cluster has 0 GPUs"),
    ):
        proc = procs.run([*base, *flags], env=cluster.env, timeout=300)
        assert proc.returncode == 2, proc.stderr[-2000:]
        assert message in proc.stderr and "Loading weights" not in proc.stderr
    assert not (tmp_path / "run" / "stages").exists()
