"""Fixtures for the Hub tests: a local Hub server in a subprocess, builds to publish, client env.

The server is the real ``spl-hf hub serve`` process (so a test can SIGKILL it), on 127.0.0.1 and
a free port; clients are the unmodified ``huggingface_hub``/``datasets`` over HTTP.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import procs

TOKEN = "hub-test-token-5d1f"  # the test server's token; tests assert it never appears in outputs


class HubProcess:
    """``spl-hf hub serve`` on a root folder; restartable (a restart gets a new port)."""

    def __init__(self, root: Path, token: str | None = TOKEN, args: tuple[str, ...] = ()) -> None:
        self.root, self.token, self.args = root, token, args
        self.proc: subprocess.Popen | None = None
        self.url = ""

    def start(self) -> HubProcess:
        cmd = [
            sys.executable,
            "-m",
            "spl_hf.cli",
            "hub",
            "serve",
            "--root",
            str(self.root),
            "--port",
            "0",
            *self.args,
        ]
        # The token through the environment, as documented: never in argv, where `ps` shows it.
        env = {k: v for k, v in os.environ.items() if k != "SPL_HF_HUB_TOKEN"}
        if self.token:
            env["SPL_HF_HUB_TOKEN"] = self.token
        log = self.log  # a file: a pipe nobody reads could fill up
        with open(log, "a") as err:
            self.proc = procs.start(cmd, stdout=subprocess.PIPE, stderr=err, text=True, env=env)
        line = self.proc.stdout.readline().strip()
        if not line.startswith("serving on http://127.0.0.1:"):
            procs.stop(self.proc, grace_s=0)
            raise RuntimeError(f"server did not start: {line!r} {log.read_text()[-2000:]}")
        self.url = line.removeprefix("serving on ")
        return self

    @property
    def log(self) -> Path:
        return self.root.with_name(self.root.name + ".log")

    def kill(self) -> None:
        """SIGKILL: no cleanup handlers run, as in a crash (the whole group, so no worker survives)."""
        if self.proc:
            procs.stop(self.proc, grace_s=0)

    def stop(self) -> None:
        procs.stop(self.proc, grace_s=10)


def client_env(hub: HubProcess, hf_home: Path, token: str | None = TOKEN) -> dict[str, str]:
    """Environment of a fresh client process: this server, an empty HF_HOME, classic LFS uploads."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE_"))}
    env.update(
        HF_ENDPOINT=hub.url, HF_HOME=str(hf_home), HF_HUB_DISABLE_XET="1", HF_HUB_DISABLE_TELEMETRY="1"
    )
    if token:
        env["HF_TOKEN"] = token
    return env


def run_cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return procs.run(
        [sys.executable, "-m", "spl_hf.cli", *args], env=env, capture_output=True, text=True, timeout=300
    )


def remote_digests(env: dict[str, str], targets: list[tuple]) -> list[dict]:
    """Digests of each (repo_id, revision[, configs]) loaded in ONE fresh process with ``env``."""
    code = (
        "import json, sys\nfrom spl_hf.hub.roundtrip import split_digests\n"
        f"print(json.dumps([split_digests(*t) for t in {targets!r}]))\n"
    )
    proc = procs.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    pytest.importorskip("spl_hf_hub_server", reason="the local Hub server is the [server] extra")
    server = HubProcess(tmp_path_factory.mktemp("hub-root")).start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def builds(tmp_path_factory) -> dict[str, Path]:
    """An SPL build, a tenet build (judge scores made up, no model) and a reshaped SPL build."""
    from spl_hf.build.spl import SPLBuildConfig, build_spl
    from spl_hf.build.tenets import TenetBuildConfig, build_tenets
    from tests.test_build_tenets import _inputs

    tmp = tmp_path_factory.mktemp("hub-builds")
    spl = build_spl(SPLBuildConfig(output_dir=str(tmp / "spl"))).path
    pairs, scores, _ = _inputs(tmp)
    tenets = build_tenets(
        TenetBuildConfig(
            pairs=str(pairs), scores=str(scores), capacity=2, threshold=0.3, output_dir=str(tmp / "tn")
        )
    ).path
    # Reshaped: fewer sources (splits disappear) and small shards (every file name changes).
    from spl_hf.build.spl import _sample

    prompts = [json.loads(line) for line in _sample("spl_prompts.jsonl").read_text().splitlines()]
    dropped = {p["prompt_id"] for p in prompts if p["source"] == "xstest"}
    cands = [json.loads(line) for line in _sample("spl_candidates.jsonl").read_text().splitlines()]
    (tmp / "p.jsonl").write_text(
        "".join(json.dumps(p) + "\n" for p in prompts if p["prompt_id"] not in dropped)
    )
    (tmp / "c.jsonl").write_text(
        "".join(json.dumps(c) + "\n" for c in cands if c["prompt_id"] not in dropped)
    )
    reshaped = build_spl(
        SPLBuildConfig(
            prompts=str(tmp / "p.jsonl"),
            candidates=str(tmp / "c.jsonl"),
            output_dir=str(tmp / "spl2"),
            max_shard_size="20KB",
        )
    ).path
    return {"spl": spl, "tenets": tenets, "spl_reshaped": reshaped}


@pytest.fixture
def hub_client(monkeypatch):
    """In-process clients may talk to the local server (the suite is offline otherwise) and upload
    through the classic LFS path; huggingface_hub reads both settings when it sends a request."""
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_DISABLE_XET", True)
