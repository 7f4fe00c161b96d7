"""Inputs of the model-backed commands (``judge``, ``label``, ``generate``, ``model``) and their run settings.

The model itself is :class:`spl_hf.backends.settings.ModelArgs` and each worker has its own config
(``JudgeConfig``, ``LabelerConfig``, ``GenerationConfig`` in :mod:`spl_hf.backends.settings`); output location and overwrite are
:class:`spl_hf.configs.OutputArgs`. No heavy import here: the CLI reads these for ``--help``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from spl_hf.backends.settings import check_positive
from spl_hf.errors import SplHfError

ROW_SUFFIXES = (".parquet", ".jsonl", ".json")


def check_row_suffix(flag: str, path: str | None) -> None:
    if path is not None and Path(path).suffix.lower() not in ROW_SUFFIXES:
        raise SplHfError(f"--{flag} {path}: unsupported extension; use .parquet or .jsonl")


@dataclass
class RunArgs:
    """Run (cache and input limit)"""

    cache: str = field(
        metadata={
            "help": "Results folder (shard files; a local path, NFS or an fsspec URL such as s3://b/run): "
            "a rerun or a resumed run computes only the shards it lacks."
        }
    )
    limit: int | None = field(default=None, metadata={"help": "Only the first N input rows."})

    def __post_init__(self) -> None:
        check_positive("limit", self.limit, optional=True)


@dataclass
class GenerateInputs:
    """Input"""

    prompts: str = field(metadata={"help": "Prompt rows (.parquet or .jsonl)."})


@dataclass
class JudgeInputs:
    """Input"""

    pairs: str = field(metadata={"help": "Unified pair rows (.parquet or .jsonl)."})
    tenets: str = field(default="all", metadata={"help": "Comma-separated tenet names, or 'all'."})
    tenets_file: str | None = field(
        default=None, metadata={"help": "YAML of tenet statements (default: the 49 built in)."}
    )


@dataclass
class LabelInputs:
    """Input and task"""

    items: str = field(metadata={"help": "Item or unified pair rows (.parquet or .jsonl)."})
    task: Literal["attributes", "verdict"] = field(
        default="attributes", metadata={"help": "SPL attributes, or one rule-base verdict per response."}
    )
    schema: str | None = field(
        default=None, metadata={"help": "Attribute schema YAML (default: the built-in SPL schema)."}
    )
    pair_labels: str | None = field(
        default=None, metadata={"help": "Verdict task on pair rows: also write pair labels here."}
    )

    def __post_init__(self) -> None:
        if self.task not in ("attributes", "verdict"):
            raise SplHfError(f"--task must be attributes or verdict, got {self.task!r}")
        check_row_suffix("pair_labels", self.pair_labels)
        if self.pair_labels and self.task != "verdict":
            raise SplHfError("--pair_labels needs --task verdict")


@dataclass
class ModelCommandArgs:
    """Action"""

    action: Literal["prepare", "info"] = field(
        metadata={
            "help": "prepare: build the embedded model's safetensors cache; info: load a model and show it.",
            "positional": True,
        }
    )
    force: bool = field(default=False, metadata={"help": "prepare: rebuild the cache even if present."})
