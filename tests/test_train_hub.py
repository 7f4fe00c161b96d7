"""train.py reading a dataset published to the local Hub server through HF_ENDPOINT.

Runs when the checkout has the local Hub server (`spl-hf hub serve`) and publisher (`spl-hf publish`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import procs
from tests.conftest import REPO

pytest.importorskip("spl_hf_hub_server", reason="needs the local Hub server (spl-hf hub serve)")

TOKEN = "train-hub-test-token-7c2e"


@pytest.fixture(scope="module")
def hub(tmp_path_factory, built_spl):
    root = tmp_path_factory.mktemp("hub")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE_"))}
    env.update(
        PYTHONPATH=str(REPO),
        HF_HOME=str(root / "hf_home"),
        HF_HUB_DISABLE_XET="1",
        HF_HUB_DISABLE_TELEMETRY="1",
        TOKENIZERS_PARALLELISM="false",
        OMP_NUM_THREADS="1",
    )
    with open(root / "server.log", "w") as log:
        proc = procs.start(
            [
                sys.executable,
                "-m",
                "spl_hf.cli",
                "hub",
                "serve",
                "--root",
                str(root / "store"),
                "--port",
                "0",
                "--token",
                TOKEN,
            ],
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
        )
    line = proc.stdout.readline().strip()
    assert line.startswith("serving on http://"), (root / "server.log").read_text()[-2000:]
    env.update(HF_ENDPOINT=line.removeprefix("serving on "), HF_TOKEN=TOKEN)
    pub = procs.run(
        [sys.executable, "-m", "spl_hf.cli", "publish", str(built_spl), "--repo_id", "spl-hf/spl-train-test"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    try:
        assert pub.returncode == 0, pub.stderr[-3000:]
        yield env
    finally:
        procs.stop(proc)


def test_train_from_the_local_hub(hub, tmp_path, tiny_model_dir):
    out = tmp_path / "run"
    cmd = [
        sys.executable,
        "-m",
        "accelerate.commands.launch",
        "--cpu",
        "--num_processes",
        "1",
        "--num_machines",
        "1",
        "--mixed_precision",
        "no",
        "--dynamo_backend",
        "no",
        "train.py",
        "--config",
        "recipes/train/demo_cpu.yaml",
        "--max_steps",
        "2",
        "--dataset_name",
        "spl-hf/spl-train-test",
        "--dataset_train_split",
        "xstest",
        "--model_name_or_path",
        str(tiny_model_dir),
        "--output_dir",
        str(out),
    ]
    proc = procs.run(cmd, cwd=REPO, env=hub, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rec = json.loads((out / "run.json").read_text())
    sha = rec["dataset_revision"]
    assert (
        len(sha) == 40
        and rec["dataset_fingerprint"] == sha
        and rec["dataset_name"] == "spl-hf/spl-train-test"
    )
    assert rec["dataset_files"] == ["preferences/xstest-00000-of-00001.parquet"] and rec["global_steps"] == 2
    card = (out / "README.md").read_text()
    assert f"/datasets/spl-hf/spl-train-test/tree/{sha}" in card and "spl-hf/spl-train-test" in card
    for p in Path(out).rglob("*"):  # the token never reaches an output
        if p.is_file():
            assert TOKEN.encode() not in p.read_bytes(), p


def test_hub_errors_before_model_loading(hub, tmp_path):
    cmd = [
        sys.executable,
        "train.py",
        "--config",
        "recipes/train/demo_cpu.yaml",
        "--dataset_name",
        "spl-hf/spl-train-test",
        "--dataset_config",
        "derivations",
        "--dataset_train_split",
        "xstest",
        "--model_name_or_path",
        "/nonexistent/model",
        "--output_dir",
        str(tmp_path / "run"),
    ]
    proc = procs.run(cmd, cwd=REPO, env=hub, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 2
    assert "null `chosen`" in proc.stderr and "preferences" in proc.stderr
