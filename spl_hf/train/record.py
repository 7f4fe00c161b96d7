"""What a training run leaves next to its adapter: ``run.json``, the resolved config and a model card.

``run.json`` is the contract other tools read (evaluation pairs runs by ``seed`` and condition):
it always holds ``model_name_or_path``, ``seed``, ``dataset_name``, ``dataset_config``,
``dataset_revision``, ``train_split``, ``rows``, ``world_size``, ``wall_s``, ``final_loss`` and
``versions``. It is written last, so its presence marks a finished run.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from enum import Enum
from importlib import metadata
from pathlib import Path
from typing import Any

import yaml

from spl_hf.files import write_json
from spl_hf.train.data import DataRecord

RUN_FILE = "run.json"
CONFIG_FILE = "train_config.yaml"
CARD_FILE = "README.md"
PACKAGES = ("spl_hf", "torch", "transformers", "trl", "peft", "accelerate", "datasets", "huggingface_hub")


def versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def _plain(value: Any) -> Any:
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [_plain(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _plain(dataclasses.asdict(value))
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def _no_secrets(d: dict[str, Any]) -> dict[str, Any]:
    # Tokens never reach an output file, not even masked placeholders that look like values.
    return {k: v for k, v in d.items() if not (k == "token" or (k.endswith("_token") and k != "pad_token"))}


def resolved_config(script_args: Any, training_args: Any, model_args: Any) -> dict[str, Any]:
    """Every parsed value, by section, as plain YAML-safe data (tokens removed)."""
    return {
        "script": _no_secrets(_plain(dataclasses.asdict(script_args))),
        "training": _no_secrets(_plain(training_args.to_dict())),
        "model": _no_secrets(_plain(dataclasses.asdict(model_args))),
    }


def safe_argv(argv: Sequence[str]) -> list[str]:
    """The command line with the value after any ``--*token*`` flag replaced."""
    out: list[str] = []
    hide = False
    for a in argv:
        if hide:
            out.append("<hidden>")
            hide = False
            continue
        if a.startswith("--") and "token" in a.lower() and a != "--pad_token":
            if "=" in a:
                out.append(a.split("=", 1)[0] + "=<hidden>")
                continue
            hide = True
        out.append(a)
    return out


@dataclasses.dataclass(frozen=True)
class RunRecord:
    model_name_or_path: str
    model: dict[str, str]
    seed: int
    data: DataRecord
    weight_column: str | None
    world_size: int
    global_steps: int
    wall_s: float
    train_s: float
    final_loss: float | None
    train_loss: float | None
    adapted_modules: int
    trainable_params: int
    total_params: int
    settings: dict[str, Any]
    argv: list[str]

    def to_dict(self) -> dict[str, Any]:
        d = self.data
        return {
            "model_name_or_path": self.model_name_or_path,
            "model": self.model,
            "seed": self.seed,
            "dataset_name": d.dataset_name,
            "dataset_config": d.dataset_config,
            "dataset_revision": d.dataset_revision,
            "dataset_fingerprint": d.dataset_fingerprint,
            "dataset_files": d.data_files,
            "train_split": d.split,
            "sources": d.sources,
            "rows": d.rows,
            "weight_column": self.weight_column,
            "world_size": self.world_size,
            "global_steps": self.global_steps,
            "wall_s": round(self.wall_s, 3),
            "train_s": round(self.train_s, 3),
            "final_loss": self.final_loss,
            "train_loss": self.train_loss,
            "adapted_modules": self.adapted_modules,
            "trainable_params": self.trainable_params,
            "total_params": self.total_params,
            "settings": self.settings,
            "versions": versions(),
            "argv": self.argv,
        }


def final_loss(log_history: list[dict[str, Any]]) -> float | None:
    """The last logged training loss (the loss of the final logging window)."""
    for entry in reversed(log_history):
        if "loss" in entry and isinstance(entry["loss"], int | float) and math.isfinite(entry["loss"]):
            return float(entry["loss"])
    return None


def dataset_link(data: DataRecord) -> str:
    if data.dataset_revision is None:
        return f"local folder `{data.dataset_name}` (sha256 of its data files: `{data.dataset_fingerprint}`)"
    from huggingface_hub import constants

    url = f"{constants.ENDPOINT.rstrip('/')}/datasets/{data.dataset_name}/tree/{data.dataset_revision}"
    return f"[{data.dataset_name}]({url}) at commit `{data.dataset_revision}`"


def model_card(record: RunRecord, base_model: str) -> str:
    d = record.data
    s = record.settings
    meta: dict[str, Any] = {
        "base_model": base_model,
        "library_name": "peft",
        "tags": ["trl", "dpo", "lora", "spl_hf"],
        "pipeline_tag": "text-generation",
    }
    if d.dataset_revision is not None:
        meta["datasets"] = [d.dataset_name]
    rows = [
        ("Base model", f"`{base_model}` ({record.model.get('revision', '')})"),
        ("Dataset", dataset_link(d)),
        (
            "Config / split",
            f"`{d.dataset_config}` / `{d.split}`"
            + (f", sources {', '.join(d.sources)}" if d.sources else ""),
        ),
        ("Rows", f"{d.rows:,}"),
        (
            "Objective",
            f"DPO, {s.get('loss_type')} loss, beta = {s.get('beta')}"
            + (f", each pair weighted by `{record.weight_column}`" if record.weight_column else ""),
        ),
        ("Reference", "base model with the adapter disabled"),
        (
            "Adapter",
            f"LoRA r = {s.get('lora_r')}, alpha = {s.get('lora_alpha')}, dropout = {s.get('lora_dropout')}, "
            f"rslora = {s.get('use_rslora')}, targets `{s.get('lora_target_modules')}`",
        ),
        ("Adapted modules", f"{record.adapted_modules:,} ({record.trainable_params:,} trainable parameters)"),
        (
            "Optimizer",
            f"{s.get('optim')}, lr {s.get('learning_rate')}, {s.get('lr_scheduler_type')} schedule, "
            f"warmup {s.get('warmup_steps')}",
        ),
        ("Seed", str(record.seed)),
        ("Steps / processes", f"{record.global_steps} optimizer steps on {record.world_size} process(es)"),
        ("Final loss", "n/a" if record.final_loss is None else f"{record.final_loss:.6g}"),
    ]
    table = "\n".join(["| Setting | Value |", "|---|---|", *(f"| {k} | {v} |" for k, v in rows)])
    return (
        "---\n" + yaml.safe_dump(meta, sort_keys=False) + "---\n\n"
        f"# DPO LoRA adapter for {base_model}\n\n"
        f"Trained with `spl_hf`'s `train.py` (TRL `DPOTrainer` + PEFT LoRA) on {dataset_link(d)}.\n\n"
        f"{table}\n\n"
        "Every setting is in `train_config.yaml`; data identity, package versions and timings in `run.json`.\n\n"
        "```python\nfrom peft import AutoPeftModelForCausalLM\n\n"
        'model = AutoPeftModelForCausalLM.from_pretrained("path/to/this/folder")\n```\n'
    )


def write_run(out: Path, record: RunRecord, config: dict[str, Any], base_model: str) -> None:
    """Write the config and card, then ``run.json`` last (its presence marks a finished run)."""
    from spl_hf.files import write_text

    write_text(out / CONFIG_FILE, yaml.safe_dump(config, sort_keys=False, width=100))
    write_text(out / CARD_FILE, model_card(record, base_model))
    write_json(out / RUN_FILE, record.to_dict(), sort_keys=True, ascii_only=True)
