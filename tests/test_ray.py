"""The Ray executor against a real local Ray runtime: the demo releases write the bytes of the local run.

`make test-ray` runs these (SPL_HF_TEST_RAY=1; they need the [ray] extra and take minutes); otherwise
they are skipped, so `make test` neither needs Ray nor spends its time budget here.
One local runtime (2 CPUs) serves the session; each release runs as its own driver process joining it,
so a test can SIGKILL a replica or the driver itself.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from tests import procs
from tests.conftest import REPO

if not os.environ.get("SPL_HF_TEST_RAY"):
    pytest.skip("Ray executor tests run in `make test-ray` (SPL_HF_TEST_RAY=1)", allow_module_level=True)
ray = pytest.importorskip("ray")
psutil = pytest.importorskip("psutil")

pytestmark = [pytest.mark.slow, pytest.mark.model, pytest.mark.ray]
TENETS = REPO / "recipes" / "tenets" / "demo.yaml"
SPL = REPO / "recipes" / "spl" / "demo.yaml"
N_SCORES = 72  # 12 pairs x 6 tenets
SHARDS = ["--shard_groups", "2"]  # 6 judge shards of 2 pairs each: a kill can land between them


@pytest.fixture(scope="session")
def ray_address() -> str:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}


def _argv(kind: str, recipe: Path, root: Path, *extra: str) -> list[str]:
    run = ["--run_dir", str(root / "run"), "--output_dir", str(root / "ds"), "--no_progress"]
    return [
        sys.executable,
        "-m",
        "spl_hf.cli",
        "release",
        kind,
        "--config",
        str(recipe),
        *run,
        *SHARDS,
        *extra,
    ]


def _ray_flags(address: str, replicas: int) -> list[str]:
    return ["--executor", "ray", "--replicas", str(replicas), "--ray_address", address]


def _release(argv: list[str]) -> None:
    proc = procs.run(argv, env=_env(), capture_output=True, text=True, timeout=1500)
    assert proc.returncode == 0, proc.stderr[-3000:]


def _start_tenets(root: Path, address: str, replicas: int) -> AbstractContextManager[subprocess.Popen]:
    """The tenet release on Ray in the background, for a test that kills part of it."""
    argv = _argv("tenets", TENETS, root, *_ray_flags(address, replicas))
    return procs.started(argv, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _manifest(root: Path) -> bytes:
    return (root / "ds" / "MANIFEST.sha256").read_bytes()


def _shards(root: Path, kind: str) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((root / "run" / "results" / kind).glob("[!.]*.parquet"))}


def _stage_counts(root: Path, name: str) -> dict:
    report = json.loads((root / "run" / "run_report.json").read_text())
    return next(s for s in report["stages"] if s["name"] == name)["counts"]


def _wait_for_shards(root: Path, n: int, proc: subprocess.Popen, timeout: float = 900) -> None:
    deadline = time.monotonic() + timeout
    while len(_shards(root, "judge")) < n:
        assert proc.poll() is None, "the release ended before the kill"
        assert time.monotonic() < deadline, "no judge shard in time"
        time.sleep(0.2)


@pytest.fixture(scope="module")
def local_tenets(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("local")
    _release(_argv("tenets", TENETS, root))
    return root


def test_ray_with_two_replicas_writes_the_local_manifest_and_shards(
    local_tenets: Path, ray_address: str, tmp_path: Path
) -> None:
    _release(_argv("tenets", TENETS, tmp_path, *_ray_flags(ray_address, 2)))
    assert _manifest(tmp_path) == _manifest(local_tenets)
    assert (
        _shards(tmp_path, "judge") == _shards(local_tenets, "judge") and len(_shards(tmp_path, "judge")) == 6
    )
    assert _stage_counts(tmp_path, "judge")["computed"] == N_SCORES


def _replica_processes() -> list[psutil.Process]:
    """This session's engine replicas (descendants of this test process only)."""
    out = []
    for p in psutil.Process(os.getpid()).children(recursive=True):
        try:
            if "ShardActor" in " ".join(p.cmdline()):
                out.append(p)
        except psutil.NoSuchProcess:
            continue
    return out


def test_a_replica_killed_mid_stage_is_retried_and_the_manifest_holds(
    local_tenets: Path, ray_address: str, tmp_path: Path
) -> None:
    with _start_tenets(tmp_path, ray_address, replicas=2) as proc:
        _wait_for_shards(tmp_path, 1, proc)
        replicas = _replica_processes()
        assert replicas, "no replica process found"
        replicas[0].send_signal(signal.SIGKILL)
        killed_at = len(_shards(tmp_path, "judge"))
        assert proc.wait(timeout=1500) == 0
    assert killed_at < 6, "the kill must land mid-stage"
    assert _manifest(tmp_path) == _manifest(local_tenets)
    assert _shards(tmp_path, "judge") == _shards(local_tenets, "judge")


def test_the_driver_killed_and_resumed_with_one_replica_writes_the_same_manifest(
    local_tenets: Path, ray_address: str, tmp_path: Path
) -> None:
    with _start_tenets(tmp_path, ray_address, replicas=2) as proc:
        _wait_for_shards(tmp_path, 1, proc)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    time.sleep(2)  # a replica that was writing when its driver died finishes or dies: either is fine
    done = len(_shards(tmp_path, "judge"))
    assert 0 < done < 6 and not (tmp_path / "ds" / "MANIFEST.sha256").exists()

    _release(_argv("tenets", TENETS, tmp_path, *_ray_flags(ray_address, 1)))
    counts = _stage_counts(tmp_path, "judge")
    assert counts["cached"] >= done * 12 and counts["computed"] == N_SCORES - counts["cached"]
    assert _manifest(tmp_path) == _manifest(local_tenets)


def test_spl_release_generate_label_and_verdict_on_ray_match_local(ray_address: str, tmp_path: Path) -> None:
    _release(_argv("spl", SPL, tmp_path / "local"))
    _release(_argv("spl", SPL, tmp_path / "ray", *_ray_flags(ray_address, 2)))
    assert _manifest(tmp_path / "ray") == _manifest(tmp_path / "local")
    for kind in ("generate", "label", "verdict"):
        assert _shards(tmp_path / "ray", kind) == _shards(tmp_path / "local", kind) != {}
    assert _stage_counts(tmp_path / "ray", "label")["computed"] > 0


def test_bad_executor_settings_fail_before_any_model_loads(ray_address: str, tmp_path: Path) -> None:
    base = _argv("tenets", TENETS, tmp_path)
    for flags, message in (
        (["--executor", "ray", "--ray_address", "127.0.0.1:1"], "cannot connect to the Ray cluster"),
        ([*_ray_flags(ray_address, 1), "--gpus_per_replica", "1"], "the Ray cluster has 0 GPUs"),
    ):
        proc = procs.run([*base, *flags], env=_env(), capture_output=True, text=True, timeout=300)
        assert proc.returncode == 2, proc.stderr[-2000:]
        assert message in proc.stderr and "Loading weights" not in proc.stderr
    assert not (tmp_path / "run" / "stages").exists()
