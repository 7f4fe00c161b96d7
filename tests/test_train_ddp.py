"""train.py with world size 2 (two CPU gloo ranks): the same global steps as one process, a finite loss.

The ranks rendezvous on an explicit free loopback port, and every collective and store operation
gives up after `DDP_TIMEOUT_S` (`--ddp_timeout`, TrainingArguments' own option) rather than gloo's
30-minute default: a rank whose peer is gone fails within a minute, with both ranks' output in the
failure message, instead of waiting half an hour.

The in-suite test starts the two ranks itself (the env:// rendezvous that torchrun's workers also use,
without the elastic agent). `torch.distributed.run`, as `accelerate launch --multi_cpu` uses it, is
the `ddp` test run on purpose by `make test-ddp`: it starts an agent process, a store inside it
and a rendezvous round before the same two ranks, minutes on two shared cores.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from contextlib import ExitStack
from pathlib import Path

import pytest

from tests import procs
from tests.conftest import REPO, free_port
from tests.test_train_run import _env, _train_flags

DDP_TIMEOUT_S = 60  # gloo timeouts: a rank left alone fails in a minute, not in 30
WAIT_S = 600  # the whole run; a rank still running DDP_TIMEOUT_S after its peer ended is a hang


def _ddp_env(port: int) -> dict[str, str]:
    # Loopback only: gloo binds the interface MASTER_ADDR resolves to, never the machine's hostname.
    return {**_env(), "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "GLOO_SOCKET_IFNAME": "lo"}


def _flags(built_spl: Path, model: Path, out: Path) -> list[str]:
    return [*_train_flags(built_spl, model, out), "--ddp_timeout", str(DDP_TIMEOUT_S)]


def _tails(logs: list[Path]) -> str:
    return "\n".join(f"--- {p.name}:\n{p.read_text(errors='replace')[-3000:]}" for p in logs if p.is_file())


def _run_ranks(cmds: list[tuple[list[str], dict[str, str]]], logs: Path) -> list[int | None]:
    """Start each (argv, env) as one rank, output to a file per rank; their exit codes, None for a rank
    still running `DDP_TIMEOUT_S` + 30 s after another one ended (it is then killed with its group)."""
    logs.mkdir(parents=True, exist_ok=True)
    with ExitStack() as stack:
        running = []
        for rank, (argv, env) in enumerate(cmds):
            log = stack.enter_context(open(logs / f"rank{rank}.log", "w"))
            running.append(
                stack.enter_context(
                    procs.started(argv, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
                )
            )
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline and any(p.poll() is None for p in running):
            if any(p.poll() is not None for p in running):  # one ended: the other has a bounded grace
                deadline = min(deadline, time.monotonic() + DDP_TIMEOUT_S + 30)
            time.sleep(0.5)
        return [p.poll() for p in running]


def _check(out: Path, codes: list[int | None], logs: Path) -> None:
    rank_logs = sorted(logs.rglob("*.log"))
    assert codes == [0] * len(codes), f"exit codes {codes} (None: hung, killed)\n{_tails(rank_logs)}"
    rec = json.loads((out / "run.json").read_text())
    # max_steps 2 as in tests/test_train_run.py's one-process run, which asserts global_steps == 2.
    assert rec["world_size"] == 2 and rec["global_steps"] == 2, _tails(rank_logs)
    assert math.isfinite(rec["final_loss"])


@pytest.mark.slow
def test_two_ranks_train_the_same_global_steps(tmp_path, built_spl, tiny_model_dir):
    out, port = tmp_path / "ddp", free_port()
    argv = [sys.executable, *_flags(built_spl, tiny_model_dir, out)]
    ranks = [
        (
            argv,
            {
                **_ddp_env(port),
                "RANK": str(r),
                "LOCAL_RANK": str(r),
                "WORLD_SIZE": "2",
                "LOCAL_WORLD_SIZE": "2",
            },
        )
        for r in range(2)
    ]
    _check(out, _run_ranks(ranks, tmp_path / "logs"), tmp_path / "logs")


@pytest.mark.ddp
@pytest.mark.skipif(not os.environ.get("SPL_HF_TEST_DDP"), reason="torchrun's agent: `make test-ddp`")
def test_torchrun_two_processes_train_the_same_global_steps(tmp_path, built_spl, tiny_model_dir):
    out, logs = tmp_path / "ddp", tmp_path / "logs"
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nnodes",
        "1",
        "--nproc-per-node",
        "2",
        "--rdzv-backend",
        "c10d",
        "--rdzv-endpoint",
        f"127.0.0.1:{free_port()}",
        "--rdzv-conf",
        f"join_timeout={DDP_TIMEOUT_S},read_timeout={DDP_TIMEOUT_S}",
        "--local-addr",
        "127.0.0.1",
        "--max-restarts",
        "0",
        "--log-dir",
        str(logs / "torchrun"),
        "--redirects",
        "3",  # each rank's stdout and stderr in a file of its own under --log-dir
        *_flags(built_spl, tiny_model_dir, out),
    ]
    env = {**_env(), "GLOO_SOCKET_IFNAME": "lo"}
    _check(out, _run_ranks([(cmd, env)], logs), logs)
