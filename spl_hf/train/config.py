"""Settings of ``spl-hf train sweep`` (no heavy import: the CLI reads them for ``--help``)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field


@dataclass
class SweepArgs:
    """Sweep"""

    recipe: str = field(metadata={"help": "train.py recipe, e.g. recipes/train/spl_dpo_gemma.yaml."})
    seeds: list[int] = field(metadata={"help": "Run seeds, e.g. 1 2 3 4 5."})
    conditions: list[str] = field(
        metadata={"help": "NAME=CONFIG entries: folder name and the dataset config it trains on."}
    )
    dataset: str | None = field(
        default=None, metadata={"help": "Dataset (folder or Hub id) for every run; default: the recipe's."}
    )
    accelerate_config: str | None = field(
        default=None,
        metadata={
            "help": "Start each run with `accelerate launch --config_file F` (e.g. "
            "recipes/accelerate/multi_gpu.yaml)."
        },
    )
    dry_run: bool = field(default=False, metadata={"help": "Print the planned commands and exit."})
    train_args: list[str] = field(
        default_factory=list,
        metadata={
            "help": "`--` then flags passed to every train.py run.",
            "positional": True,
            "nargs": argparse.REMAINDER,
        },
    )
