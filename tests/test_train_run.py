"""`accelerate launch train.py` end to end on an SPL dataset built into a temporary folder."""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
from pathlib import Path

import pytest

from tests import procs
from tests.conftest import REPO

# Until the SPL build publishes a `train` split listing every source, train on one per-source split.
SPLIT = "xstest"


def _env() -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "OMP_NUM_THREADS": "1",
    }


def _train_flags(dataset: Path, model: Path, out: Path) -> list[str]:
    return [
        "train.py",
        "--config",
        "recipes/train/demo_cpu.yaml",
        "--max_steps",
        "2",
        "--dataset_name",
        str(dataset),
        "--dataset_train_split",
        SPLIT,
        "--model_name_or_path",
        str(model),
        "--output_dir",
        str(out),
    ]


def _hashes(folder: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()
    }


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory, built_spl, tiny_model_dir) -> tuple[Path, dict[str, str]]:
    out = tmp_path_factory.mktemp("train") / "run"
    before = _hashes(tiny_model_dir)
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
        *_train_flags(built_spl, tiny_model_dir, out),
    ]
    proc = procs.run(cmd, cwd=REPO, env=_env(), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "final loss" in proc.stdout + proc.stderr
    return out, before


def test_run_record(run_dir, built_spl, tiny_model_dir):
    out, _ = run_dir
    rec = json.loads((out / "run.json").read_text())
    for key in (
        "model_name_or_path",
        "seed",
        "dataset_name",
        "dataset_config",
        "dataset_revision",
        "train_split",
        "rows",
        "world_size",
        "wall_s",
        "final_loss",
        "versions",
    ):
        assert key in rec, key
    assert rec["model_name_or_path"] == str(tiny_model_dir)
    assert rec["dataset_name"] == str(built_spl) and rec["dataset_config"] == "preferences"
    assert rec["train_split"] == SPLIT and rec["dataset_revision"] is None
    labeled = json.loads((built_spl / "build_report.json").read_text())
    assert rec["rows"] > 0 and len(rec["dataset_fingerprint"]) == 64
    assert rec["rows"] <= labeled["splits"][SPLIT]
    assert rec["seed"] == 1 and rec["world_size"] == 1 and rec["global_steps"] == 2
    assert math.isfinite(rec["final_loss"]) and 0 < rec["final_loss"] < 5
    assert rec["adapted_modules"] == 14  # 2 layers x (q, k, v, o, gate, up, down)
    assert 0 < rec["trainable_params"] < rec["total_params"]
    assert rec["versions"]["trl"] and rec["versions"]["peft"] and rec["versions"]["accelerate"]


def test_adapter_tokenizer_card_written(run_dir, built_spl):
    out, _ = run_dir
    for name in (
        "adapter_config.json",
        "adapter_model.safetensors",
        "tokenizer.json",
        "tokenizer_config.json",
        "train_config.yaml",
        "README.md",
        ".spl_hf-output.json",
    ):
        assert (out / name).is_file(), name
    card = (out / "README.md").read_text()
    assert str(built_spl) in card and "preferences" in card and SPLIT in card and "library_name: peft" in card
    cfg = json.loads((out / "adapter_config.json").read_text())
    assert cfg["r"] == 8 and cfg["lora_alpha"] == 16 and cfg["bias"] == "none"


def test_lora_weights_changed_base_unchanged(run_dir, tiny_model_dir):
    from safetensors.torch import load_file

    out, before = run_dir
    weights = load_file(str(out / "adapter_model.safetensors"))
    assert weights and all(".lora_A." in k or ".lora_B." in k for k in weights)
    lora_b = [v for k, v in weights.items() if ".lora_B." in k]
    # LoRA B starts at zero (the adapter contributes nothing); training moved it.
    assert lora_b and all(float(v.abs().max()) > 0 for v in lora_b)
    assert _hashes(tiny_model_dir) == before


def test_rerun_needs_overwrite_and_reproduces_bytes(run_dir, built_spl, tiny_model_dir):
    out, _ = run_dir
    from spl_hf.train.entry import cli

    before = _hashes(out)
    assert cli(_train_flags(built_spl, tiny_model_dir, out)[1:]) == 2
    assert _hashes(out) == before
    old = json.loads((out / "run.json").read_text())
    # Same data, model, seed and thread count (float sums depend on it): the retrained adapter is
    # byte-identical, here retrained in-process rather than launched.
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as OMP_NUM_THREADS=1 in the launched run
    try:
        assert cli([*_train_flags(built_spl, tiny_model_dir, out)[1:], "--overwrite", "true"]) == 0
    finally:
        torch.set_num_threads(threads)
    after = _hashes(out)
    assert after["adapter_model.safetensors"] == before["adapter_model.safetensors"]
    new = json.loads((out / "run.json").read_text())
    volatile = {"wall_s", "train_s", "argv"}
    assert {k: v for k, v in new.items() if k not in volatile} == {
        k: v for k, v in old.items() if k not in volatile
    }


# World size 2 (same global steps, a finite loss): tests/test_train_ddp.py.
