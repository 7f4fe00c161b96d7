"""Invented sample records in the pools' own layouts, shipped under ``spl_hf/data/sources``."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

SAMPLE_FILES: dict[str, str] = {
    "pku_train": "pku_train.sample.jsonl",
    "hh_train": "hh_train.sample.jsonl",
    "ultrafeedback_train": "ultrafeedback_train.sample.jsonl",
    "wildfeedback_st": "wildfeedback.sample.json",
    "wf_mt": "wildfeedback.sample.json",
}


def sample_paths() -> dict[str, Path]:
    """Pool name -> shipped sample file, ready for ``read_pools``."""
    root = resources.files("spl_hf.data").joinpath("sources")
    return {source: Path(str(root.joinpath(name))) for source, name in SAMPLE_FILES.items()}
