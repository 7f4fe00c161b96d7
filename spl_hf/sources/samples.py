"""Invented sample records in the sources' own layouts, shipped as package data.

Pair pools under ``spl_hf/data/sources``; the six SPL prompt sources under ``spl_hf/data/prompts``
(two prompts each); the evaluation sets (OR-Bench Hard-1K and Toxic layouts) under
``spl_hf/data/eval``.
"""

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


PROMPT_SAMPLE_FILES: dict[str, str] = {
    "ultrachat": "ultrachat.sample.jsonl",
    "or_bench_80k": "or_bench_80k.sample.csv",
    "xstest": "xstest.sample.jsonl",
    "harmbench": "harmbench.sample.csv",
    "do_not_answer": "do_not_answer.sample.jsonl",
    "malicious_instruct": "malicious_instruct.sample.jsonl",
}
EVAL_SAMPLE_FILES: dict[str, str] = {
    "or_bench_hard_1k": "or_bench_hard_1k.sample.csv",
    "or_bench_toxic": "or_bench_toxic.sample.csv",
}


def _paths(folder: str, files: dict[str, str]) -> dict[str, Path]:
    root = resources.files("spl_hf.data").joinpath(folder)
    return {source: Path(str(root.joinpath(name))) for source, name in files.items()}


def sample_paths() -> dict[str, Path]:
    """Pool name -> shipped sample file, ready for ``read_pools``."""
    return _paths("sources", SAMPLE_FILES)


def prompt_sample_paths() -> dict[str, Path]:
    """SPL prompt source -> shipped sample file, ready for ``read_prompt_pools``."""
    return _paths("prompts", PROMPT_SAMPLE_FILES)


def eval_sample_paths() -> dict[str, Path]:
    """Evaluation set -> shipped sample file (held-out sets of the builders, the demo's evaluation)."""
    return _paths("eval", EVAL_SAMPLE_FILES)
