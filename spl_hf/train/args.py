"""Command-line and recipe arguments of ``train.py``: TRL's own dataclasses plus the dataset pin,
source filter, score weighting and output safety that spl_hf adds.

``TrainScriptArguments`` extends :class:`trl.ScriptArguments` rather than renaming its fields, so a
recipe written for TRL's ``dpo.py`` (``dataset_name``, ``dataset_config``, ``dataset_train_split``,
``dataset_test_split``) works unchanged here.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from trl import DPOConfig, ModelConfig, ScriptArguments, TrlParser

from spl_hf.errors import SplHfError
from spl_hf.train.group import init_cpu_group
from spl_hf.yamlio import load_yaml_file


@dataclass
class TrainScriptArguments(ScriptArguments):
    dataset_revision: str | None = field(
        default=None,
        metadata={
            "help": "Hub commit (sha, branch or tag) to load; the resolved sha is recorded in run.json. "
            "A local folder is identified by a hash of its data files instead."
        },
    )
    sources: list[str] | None = field(
        default=None,
        metadata={
            "help": "Keep only rows whose `source` column is one of these values (e.g. xstest harmbench)."
        },
    )
    score_weighting: bool = field(
        default=False,
        metadata={"help": "Weight each pair's DPO loss by a numeric column (see weight_column)."},
    )
    weight_column: str = field(
        default="score",
        metadata={
            "help": "Column holding each pair's non-negative weight when score_weighting is on "
            "(default: `score`, the stored |score| of the tenet datasets)."
        },
    )
    check_manifest: bool = field(
        default=True,
        metadata={
            "help": "Refuse a local dataset folder whose MANIFEST.sha256 (written by spl-hf builds) does not "
            "match its files; `--check_manifest false` trains on it anyway. Folders without one and Hub "
            "ids are not checked here."
        },
    )
    overwrite: bool = field(
        default=False,
        metadata={
            "help": "Replace an earlier spl_hf output in output_dir (never a folder spl_hf did not write)."
        },
    )


PARSED_TYPES = (TrainScriptArguments, DPOConfig, ModelConfig)


def make_parser() -> TrlParser:
    return TrlParser(PARSED_TYPES)


def parse_recipe(path: str | Path) -> tuple[TrainScriptArguments, DPOConfig, ModelConfig]:
    """Parse a training recipe exactly as ``train.py --config`` does (unknown keys raise).

    On a machine without a GPU, ``TrainingArguments`` refuses bf16 unless ``use_cpu`` is set; the
    recipe is then checked with ``use_cpu`` so a GPU recipe can be validated anywhere.
    """
    import torch

    extra = [] if torch.cuda.is_available() else ["--use_cpu", "true"]
    return parse_args(["--config", str(path), *extra])


def _check_recipe(argv: Sequence[str]) -> None:
    for i, arg in enumerate(argv):
        path = argv[i + 1] if arg == "--config" and i + 1 < len(argv) else arg.partition("=")[2]
        if (arg == "--config" or arg.startswith("--config=")) and path:
            load_yaml_file(path, "training recipe")


def parse_args(argv: Sequence[str] | None = None) -> tuple[TrainScriptArguments, DPOConfig, ModelConfig]:
    """Parse ``--config x.yaml`` plus flags (flags override the YAML; unknown keys raise).

    TRL's parser loads the recipe with plain ``yaml.safe_load``, which keeps the last of two equal
    keys; the recipe is first read with the project's hardened loader, which refuses that.
    """
    _check_recipe(sys.argv[1:] if argv is None else list(argv))

    def parse() -> tuple[TrainScriptArguments, DPOConfig, ModelConfig]:
        try:
            return make_parser().parse_args_and_config(args=None if argv is None else list(argv))
        except ValueError as exc:
            # TRL's and transformers' parsers and config checks report bad settings (an unknown recipe
            # key, an inconsistent DPOConfig) as ValueError: here, and only here, that is bad input.
            raise SplHfError(f"training settings: {exc}") from None

    init_cpu_group(parse)  # before the parse whose device set-up would make the group without ddp_timeout
    return parse()
