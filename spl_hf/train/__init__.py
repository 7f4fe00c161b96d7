"""DPO + LoRA training on published splits (``train.py``), seed sweeps and score-weighted DPO.

Attributes load on first use, so the sweep layout (:mod:`spl_hf.train.layout`), which reports and
evaluations read, imports without TRL; trainers are imported where they run.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "RUN_FILE": "spl_hf.train.record",
    "DataRecord": "spl_hf.train.data",
    "TrainScriptArguments": "spl_hf.train.args",
    "check_rows": "spl_hf.train.data",
    "load_split": "spl_hf.train.data",
    "make_parser": "spl_hf.train.args",
    "parse_args": "spl_hf.train.args",
    "seed_dir": "spl_hf.train.layout",
    "seed_dirs": "spl_hf.train.layout",
    "seed_of": "spl_hf.train.layout",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'spl_hf.train' has no attribute {name!r}")
