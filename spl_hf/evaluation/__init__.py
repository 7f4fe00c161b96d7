"""Refusal evaluation of policies: prompt sets, resumable greedy generation, metrics per prompt set,
the at-limit table across seeds, and an optional model-based refusal classifier.

Heavy dependencies (torch, transformers, peft) load only when a model is loaded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spl_hf.lazy import lazy_exports

if TYPE_CHECKING:
    from spl_hf.evaluation.classifier import RefusalClass, RefusalClassifier, RefusalItem, classify_responses
    from spl_hf.evaluation.collect import at_limit_table, collect_metrics, format_at_limit
    from spl_hf.evaluation.config import AtLimitArgs, ClassifyArgs, EvalConfig, RefusalEvalArgs
    from spl_hf.evaluation.job import CACHE, EvalTarget, evaluate_sets, plan_outputs
    from spl_hf.evaluation.model import load_policy
    from spl_hf.evaluation.prompts import (
        DEFAULT_SETS,
        SAMPLE,
        EvalPrompt,
        PromptSet,
        load_prompt_set,
        parse_prompt_sets,
    )
    from spl_hf.evaluation.run_folder import RunInfo, read_run
    from spl_hf.evaluation.runner import RefusalEvaluator, refusal_metrics


# module -> the names this face re-exports from it (as imported under TYPE_CHECKING, for readers)
_EXPORTS: dict[str, tuple[str, ...]] = {
    "spl_hf.evaluation.classifier": (
        "RefusalClass",
        "RefusalClassifier",
        "RefusalItem",
        "classify_responses",
    ),
    "spl_hf.evaluation.collect": (
        "at_limit_table",
        "collect_metrics",
        "format_at_limit",
    ),
    "spl_hf.evaluation.config": (
        "AtLimitArgs",
        "ClassifyArgs",
        "EvalConfig",
        "RefusalEvalArgs",
    ),
    "spl_hf.evaluation.job": (
        "CACHE",
        "EvalTarget",
        "evaluate_sets",
        "plan_outputs",
    ),
    "spl_hf.evaluation.model": ("load_policy",),
    "spl_hf.evaluation.prompts": (
        "DEFAULT_SETS",
        "SAMPLE",
        "EvalPrompt",
        "PromptSet",
        "load_prompt_set",
        "parse_prompt_sets",
    ),
    "spl_hf.evaluation.run_folder": (
        "RunInfo",
        "read_run",
    ),
    "spl_hf.evaluation.runner": (
        "RefusalEvaluator",
        "refusal_metrics",
    ),
}

__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
