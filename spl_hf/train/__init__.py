"""DPO + LoRA training on published splits (``train.py``), seed sweeps and score-weighted DPO.

Attributes load on first use, so the sweep layout (:mod:`spl_hf.train.layout`), which reports and
evaluations read, imports without TRL; trainers are imported where they run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spl_hf.lazy import lazy_exports

if TYPE_CHECKING:
    from spl_hf.train.args import TrainScriptArguments, make_parser, parse_args
    from spl_hf.train.config import SweepArgs
    from spl_hf.train.data import DataRecord, check_rows, load_split
    from spl_hf.train.layout import seed_dir, seed_dirs, seed_of
    from spl_hf.train.record import RUN_FILE
    from spl_hf.train.run import main
    from spl_hf.train.sweep import parse_conditions, parse_seeds, plan, prepare_root, run_sweep


# module -> the names this face re-exports from it (as imported under TYPE_CHECKING, for readers)
_EXPORTS: dict[str, tuple[str, ...]] = {
    "spl_hf.train.args": (
        "TrainScriptArguments",
        "make_parser",
        "parse_args",
    ),
    "spl_hf.train.config": ("SweepArgs",),
    "spl_hf.train.data": (
        "DataRecord",
        "check_rows",
        "load_split",
    ),
    "spl_hf.train.layout": (
        "seed_dir",
        "seed_dirs",
        "seed_of",
    ),
    "spl_hf.train.record": ("RUN_FILE",),
    "spl_hf.train.run": ("main",),
    "spl_hf.train.sweep": (
        "parse_conditions",
        "parse_seeds",
        "plan",
        "prepare_root",
        "run_sweep",
    ),
}

__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
