"""LM backends: model loading, results folder, pairwise tenet judge, attribute labeler, verdict judge,
candidate generation. Attributes load on first use, so ``import spl_hf.backends`` imports no torch."""

from __future__ import annotations

from typing import TYPE_CHECKING

from spl_hf.lazy import lazy_exports

if TYPE_CHECKING:
    from spl_hf.backends.base import Backend, Generation, InputError, LabelScores
    from spl_hf.backends.commands import (
        GenerateInputs,
        JudgeInputs,
        LabelInputs,
        ModelCommandArgs,
        RunArgs,
        check_row_suffix,
    )
    from spl_hf.backends.engines import ENGINES, Engine
    from spl_hf.backends.executor import ExecutorArgs, ExecutorError, Interrupted, as_interrupted
    from spl_hf.backends.factory import load_backend, make_backend
    from spl_hf.backends.generate import CandidateGenerator, prompts_from_rows
    from spl_hf.backends.hf import BoundaryError, HFBackend
    from spl_hf.backends.io import require_columns, write_rows
    from spl_hf.backends.judge import (
        JUDGE_LABELS,
        BadRow,
        JudgeItem,
        NotJudged,
        PairwiseJudge,
        TenetJudgement,
        parse_pairs,
    )
    from spl_hf.backends.labeler import AttributeLabeler, items_from_rows, read_labels
    from spl_hf.backends.loading import (
        EMBEDDED_NAME,
        LoadedModel,
        MissingPackageError,
        ModelInfo,
        cache_root,
        check_engine_package,
        embedded_gguf_path,
        load_model,
        prepare_embedded,
        resolve_model,
    )
    from spl_hf.backends.model_stages import (
        generate_items,
        generate_stage,
        judge_items,
        judge_outcome,
        judge_stage,
        label_stage,
        verdict_stage,
    )
    from spl_hf.backends.options import argmax_option, option_block, option_keys
    from spl_hf.backends.runner import StageRun, check_executor, run_stage, run_worker, start_stage
    from spl_hf.backends.score_columns import read_scores
    from spl_hf.backends.settings import (
        GenerationConfig,
        JudgeConfig,
        LabelerConfig,
        ModelArgs,
        check_context,
        check_positive,
        engine_kwargs,
        shipped_instructions,
    )
    from spl_hf.backends.shards import ResultsFolderError, ShardStore
    from spl_hf.backends.text import content_key, split_template, template_hash, validate_text
    from spl_hf.backends.verdict import VerdictJudge, verdict_pair_labels, verdict_preference
    from spl_hf.backends.vllm import VLLMBackend
    from spl_hf.backends.worker import NoResult, Stage, StageResult, Worker, one_by_one

# module -> the names this face re-exports from it (as imported under TYPE_CHECKING, for readers)
_EXPORTS: dict[str, tuple[str, ...]] = {
    "spl_hf.backends.base": (
        "Backend",
        "Generation",
        "InputError",
        "LabelScores",
    ),
    "spl_hf.backends.commands": (
        "GenerateInputs",
        "JudgeInputs",
        "LabelInputs",
        "ModelCommandArgs",
        "RunArgs",
        "check_row_suffix",
    ),
    "spl_hf.backends.executor": (
        "ExecutorArgs",
        "ExecutorError",
        "Interrupted",
        "as_interrupted",
    ),
    "spl_hf.backends.engines": (
        "ENGINES",
        "Engine",
    ),
    "spl_hf.backends.factory": (
        "load_backend",
        "make_backend",
    ),
    "spl_hf.backends.generate": (
        "CandidateGenerator",
        "prompts_from_rows",
    ),
    "spl_hf.backends.hf": (
        "BoundaryError",
        "HFBackend",
    ),
    "spl_hf.backends.io": (
        "require_columns",
        "write_rows",
    ),
    "spl_hf.backends.judge": (
        "JUDGE_LABELS",
        "BadRow",
        "JudgeItem",
        "NotJudged",
        "PairwiseJudge",
        "TenetJudgement",
        "parse_pairs",
    ),
    "spl_hf.backends.labeler": (
        "AttributeLabeler",
        "items_from_rows",
        "read_labels",
    ),
    "spl_hf.backends.loading": (
        "EMBEDDED_NAME",
        "LoadedModel",
        "MissingPackageError",
        "ModelInfo",
        "cache_root",
        "check_engine_package",
        "embedded_gguf_path",
        "load_model",
        "prepare_embedded",
        "resolve_model",
    ),
    "spl_hf.backends.model_stages": (
        "generate_items",
        "generate_stage",
        "judge_items",
        "judge_outcome",
        "judge_stage",
        "label_stage",
        "verdict_stage",
    ),
    "spl_hf.backends.options": (
        "argmax_option",
        "option_block",
        "option_keys",
    ),
    "spl_hf.backends.settings": (
        "GenerationConfig",
        "JudgeConfig",
        "LabelerConfig",
        "ModelArgs",
        "check_context",
        "check_positive",
        "engine_kwargs",
        "shipped_instructions",
    ),
    "spl_hf.backends.runner": (
        "StageRun",
        "check_executor",
        "run_stage",
        "run_worker",
        "start_stage",
    ),
    "spl_hf.backends.score_columns": ("read_scores",),
    "spl_hf.backends.shards": (
        "ResultsFolderError",
        "ShardStore",
    ),
    "spl_hf.backends.text": (
        "content_key",
        "split_template",
        "template_hash",
        "validate_text",
    ),
    "spl_hf.backends.verdict": (
        "VerdictJudge",
        "verdict_pair_labels",
        "verdict_preference",
    ),
    "spl_hf.backends.vllm": ("VLLMBackend",),
    "spl_hf.backends.worker": (
        "NoResult",
        "Stage",
        "StageResult",
        "Worker",
        "one_by_one",
    ),
}

__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
