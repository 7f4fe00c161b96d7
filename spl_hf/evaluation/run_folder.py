"""The ``train.py`` run-folder contract, as the evaluation reads it.

A run folder holds the LoRA adapter at its root (``adapter_config.json`` + weights) and ``run.json``
with at least ``model_name_or_path`` (the base model), usually ``seed`` and ``dataset_*`` fields.
Sweeps lay runs out as ``runs/<condition>/seed<k>/``; evaluation results go to
``<run>/eval/<prompt_set>/`` so that layout carries through.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spl_hf.errors import SplHfError
from spl_hf.train import seed_of

RUN_RECORD = "run.json"
ADAPTER_CONFIG = "adapter_config.json"
EVAL_DIR = "eval"


@dataclass(frozen=True)
class RunInfo:
    path: Path
    model_name_or_path: str | None
    seed: int | None
    condition: str | None  # the parent folder's name in the runs/<condition>/seed<k> layout
    dataset: dict[str, Any] = field(default_factory=dict)  # the record's dataset_* fields and train_split
    base_revision: str | None = None  # the base weights' identity as recorded at training time

    def check_base(self, revision: str) -> None:
        """Refuse to evaluate the adapter on other base weights than it was trained on."""
        if self.base_revision and not revision.startswith(self.base_revision):
            raise SplHfError(
                f"{self.path / RUN_RECORD}: adapter trained on base weights {self.base_revision}, "
                f"but {self.model_name_or_path!r} now resolves to {revision.split('+adapter')[0]}"
            )

    @property
    def eval_dir(self) -> Path:
        return self.path / EVAL_DIR


def read_run(path: str | Path) -> RunInfo:
    """Read a run folder; a missing record, adapter or base-model key raises naming the file."""
    run = Path(path)
    if not run.is_dir():
        raise FileNotFoundError(f"{run}: no such run folder")
    record_path = run / RUN_RECORD
    if not record_path.is_file():
        raise FileNotFoundError(f"{record_path}: run record missing (expected a train.py run folder)")
    if not (run / ADAPTER_CONFIG).is_file():
        raise FileNotFoundError(f"{run / ADAPTER_CONFIG}: no adapter at the run folder's root")
    try:
        record = json.loads(record_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise SplHfError(f"{record_path}: not valid JSON ({exc.msg})") from None
    if not isinstance(record, dict):
        raise SplHfError(f"{record_path}: expected a JSON object")
    if "model_name_or_path" not in record:
        raise SplHfError(f"{record_path}: lacks 'model_name_or_path' (the base model of the adapter)")
    model = record["model_name_or_path"]
    if model is not None and not isinstance(model, str):
        raise SplHfError(f"{record_path}: 'model_name_or_path' must be a string, got {type(model).__name__}")
    seed = record.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise SplHfError(f"{record_path}: 'seed' must be an integer, got {seed!r}")
    if seed is None:
        seed = seed_of(run.resolve().name)
    dataset = {k: v for k, v in record.items() if k.startswith("dataset") or k == "train_split"}
    condition = run.resolve().parent.name if seed_of(run.resolve().name) is not None else None
    base = record.get("model")
    base_revision = base.get("revision") if isinstance(base, dict) else None
    return RunInfo(run, model, seed, condition, dataset, base_revision)
