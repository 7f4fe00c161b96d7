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
