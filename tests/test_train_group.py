"""A CPU rank's process group uses the recipe's ddp_timeout, not torch's 30 minutes (issue 34)."""

from __future__ import annotations

import os
import sys

from tests import procs
from tests.conftest import REPO, free_port

PARSE = (
    "import sys; from spl_hf.train.args import parse_args; "
    "parse_args(['--config', 'recipes/train/demo_cpu.yaml', '--ddp_timeout', '3', '--output_dir', sys.argv[1]])"
)


def test_a_cpu_rank_whose_peer_never_comes_fails_after_ddp_timeout(tmp_path):
    # Rank 1 of 2 with nobody listening on the rendezvous port: it gives up after --ddp_timeout seconds.
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "RANK": "1",
        "LOCAL_RANK": "1",
        "WORLD_SIZE": "2",
        "LOCAL_WORLD_SIZE": "2",
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": str(free_port()),
        "GLOO_SOCKET_IFNAME": "lo",
        "OMP_NUM_THREADS": "1",
    }
    proc = procs.run([sys.executable, "-c", PARSE, str(tmp_path / "out")], cwd=REPO, env=env, timeout=300)
    assert proc.returncode != 0
    assert "DistNetworkError" in proc.stderr and "timed out after 3000ms" in proc.stderr, proc.stderr[-3000:]


END = (
    "import sys; from spl_hf.train import group; "
    "group.keep_until_exit(object()); print('written', flush=False); "
    "code = group.end_rank(3); print('after end_rank'); sys.exit(0)"
)


def test_a_launched_rank_ends_with_its_code_and_flushed_output_without_freeing_its_trainer():
    # WORLD_SIZE 2: the trainer is kept and end_rank leaves through os._exit, so nothing after it runs
    # (no interpreter teardown that would free the gloo group), yet what was printed reaches the pipe.
    env = {**os.environ, "PYTHONPATH": str(REPO), "WORLD_SIZE": "2"}
    proc = procs.run([sys.executable, "-c", END], cwd=REPO, env=env, timeout=120)
    assert (proc.returncode, proc.stdout) == (3, "written\n")


def test_a_single_process_keeps_nothing_and_end_rank_returns_its_code():
    env = {**os.environ, "PYTHONPATH": str(REPO), "WORLD_SIZE": "1"}
    proc = procs.run([sys.executable, "-c", END], cwd=REPO, env=env, timeout=120)
    assert (proc.returncode, proc.stdout) == (0, "written\nafter end_rank\n")
