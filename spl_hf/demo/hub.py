"""Demo step: publish builds to a local Hub server and load them back as a new user would."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import tempfile
from pathlib import Path

from spl_hf.hub import server_package, split_digests

DEMO_ORG = "spl-hf-demo"


def client_env(url: str, token: str, hf_home: str) -> dict[str, str]:
    """The environment of a client process of the local server: its endpoint, token, a fresh HF_HOME."""
    env = dict(
        os.environ,
        HF_ENDPOINT=url,
        HF_TOKEN=token,
        HF_HUB_DISABLE_XET="1",
        HF_HOME=hf_home,
        HF_HUB_OFFLINE="0",
        HF_DATASETS_OFFLINE="0",
    )  # the local server is the Hub here
    env.pop("HF_DATASETS_CACHE", None)
    env.pop("HF_HUB_CACHE", None)
    return env


def _python(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    """A fresh interpreter (a new user's process: its own HF_HOME) running ``args``; output captured."""
    return subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True, check=False)


def _last_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[-1] if lines else ""


def publish_and_load(url: str, token: str, builds: dict[str, Path]) -> tuple[bool, dict[str, str]]:
    """Publish each build as ``spl-hf-demo/<name>`` and load it back in a fresh process.

    Prints, per build, the commit and the pinned ``load_dataset`` line, and whether every config
    and split loaded from the server equals the local folder (Features and rows). Returns whether
    all do, and the commit of each published build.
    """
    ok, shas = True, {}
    for name, folder in builds.items():
        repo_id = f"{DEMO_ORG}/{name}"
        with tempfile.TemporaryDirectory(prefix="spl-hf-home-") as home:
            env = client_env(url, token, home)
            argv = ["-m", "spl_hf.cli", "publish", str(folder), "--repo_id", repo_id, "--json"]
            pub = _python(argv, env)
            if pub.returncode != 0:
                print(f"{name}: publish failed: {_last_line(pub.stderr)}")
                ok = False
                continue
            sha = json.loads(pub.stdout)["commit_sha"]
            loaded = _python(["-m", "spl_hf.hub.roundtrip", repo_id, "--revision", sha], env)
        if loaded.returncode != 0:
            print(f"{name}: loading {repo_id}@{sha} failed: {_last_line(loaded.stderr)}")
            ok = False
            continue
        shas[name] = sha
        remote, local = json.loads(loaded.stdout), split_digests(str(folder))
        same = remote == local
        ok &= same
        rows = sum(v["rows"] for v in remote.values())
        print(
            f"{name}: published {repo_id} at {sha}; loaded back in a fresh process: {len(remote)} "
            f"config/splits, {rows} rows, {'identical to' if same else 'DIFFERENT from'} the local folder"
        )
        print(f"  {_load_line(repo_id, folder, sha)}")
    return ok, shas


def audit_published(url: str, token: str, shas: dict[str, str]) -> bool:
    """``spl-hf audit ORG/NAME --revision SHA`` on each published build, as a consumer would run it."""
    ok = True
    for name, sha in shas.items():
        repo_id = f"{DEMO_ORG}/{name}"
        with tempfile.TemporaryDirectory(prefix="spl-hf-home-") as home:
            proc = subprocess.run(
                [sys.executable, "-m", "spl_hf.cli", "audit", repo_id, "--revision", sha, "--json"],
                env=client_env(url, token, home),
                capture_output=True,
                text=True,
                check=False,
            )
        if proc.returncode != 0:
            print(
                f"{name}: audit of {repo_id}@{sha[:12]} FAILED: {_last_line(proc.stderr) or _last_line(proc.stdout)}"
            )
            ok = False
            continue
        report = json.loads(proc.stdout)
        print(
            f"{name}: audited {repo_id}@{sha[:12]} from the server: {report.get('rows')} rows, "
            f"{report.get('reproduced')} reproduced"
        )
    return ok


def demo_publish(out: Path, builds: dict[str, Path]) -> bool:
    """Serve a local Hub under ``out/hub``, publish each build and load it back; the server is stopped after."""
    token = secrets.token_hex(16)  # exercised by the clients, never printed
    with server_package().RunningServer(str(Path(out) / "hub"), token=token) as server:
        print(f"local Hub server on {server.url}")
        ok, _ = publish_and_load(server.url, token, builds)
    return ok


def _load_line(repo_id: str, folder: Path, sha: str) -> str:
    from spl_hf.dataset import card_configs
    from spl_hf.hub import PublishResult

    configs, default, split = card_configs(Path(folder))
    return PublishResult(repo_id, sha, "main", [], [], configs, default, split).load_line()
