"""Demo step: publish builds to a local Hub server and load them back as a new user would."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import tempfile
from pathlib import Path

from spl_hf.hub.roundtrip import split_digests
from spl_hf.hub.server import RunningServer

DEMO_ORG = "spl-hf-demo"


def _client_env(url: str, token: str, hf_home: str) -> dict[str, str]:
    env = dict(os.environ, HF_ENDPOINT=url, HF_TOKEN=token, HF_HUB_DISABLE_XET="1", HF_HOME=hf_home)
    env.pop("HF_DATASETS_CACHE", None)
    env.pop("HF_HUB_CACHE", None)
    return env


def demo_publish(out: Path, builds: dict[str, Path]) -> bool:
    """Serve a local Hub under ``out/hub``, publish each build, load each back in a fresh process.

    Prints, per build, the commit and the pinned ``load_dataset`` line, and whether every config
    and split loaded from the server equals the local folder (Features and rows). Returns True
    when all do. The server is stopped in every case.
    """
    token = secrets.token_hex(16)  # exercised by the clients, never printed
    server = RunningServer(str(Path(out) / "hub"), token=token)
    ok = True
    try:
        print(f"local Hub server on {server.url}")
        for name, folder in builds.items():
            repo_id = f"{DEMO_ORG}/{name}"
            with tempfile.TemporaryDirectory(prefix="spl-hf-home-") as home:
                env = _client_env(server.url, token, home)
                pub = subprocess.run(
                    [sys.executable, "-m", "spl_hf.cli", "publish", str(folder), "--repo-id", repo_id, "--json"],
                    env=env, capture_output=True, text=True, check=False,
                )
                if pub.returncode != 0:
                    print(f"{name}: publish failed: {pub.stderr.strip().splitlines()[-1:]}")
                    ok = False
                    continue
                sha = json.loads(pub.stdout)["commit_sha"]
                loaded = subprocess.run(
                    [sys.executable, "-m", "spl_hf.hub.roundtrip", repo_id, "--revision", sha],
                    env=env, capture_output=True, text=True, check=False,
                )
            if loaded.returncode != 0:
                print(f"{name}: loading {repo_id}@{sha} failed: {loaded.stderr.strip().splitlines()[-1:]}")
                ok = False
                continue
            remote, local = json.loads(loaded.stdout), split_digests(str(folder))
            same = remote == local
            ok &= same
            rows = sum(v["rows"] for v in remote.values())
            print(f"{name}: published {repo_id} at {sha}; loaded back in a fresh process: {len(remote)} "
                  f"config/splits, {rows} rows, {'identical to' if same else 'DIFFERENT from'} the local folder")
            print(f"  {_load_line(repo_id, folder, sha)}")
    finally:
        server.stop()
    return ok


def _load_line(repo_id: str, folder: Path, sha: str) -> str:
    from spl_hf.hub.publish import PublishResult, card_configs

    configs, default, split = card_configs(Path(folder))
    return PublishResult(repo_id, sha, "main", [], [], configs, default, split).load_line()
