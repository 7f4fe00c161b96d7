"""LM backends: model loading, result cache, pairwise tenet judge, attribute labeler, verdict judge,
candidate generation. Heavy dependencies (torch, transformers, vllm) load on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from spl_hf.backends.base import Backend, Generation, InputError, LabelScores
from spl_hf.backends.cache import ResultCache, content_key
from spl_hf.backends.loading import ModelInfo, cache_root, load_model, prepare_embedded, resolve_model

if TYPE_CHECKING:
    from spl_hf.backends.hf import HFBackend

# name -> module, resolved lazily so `import spl_hf.backends` does not import torch.
_LAZY = {
    "HFBackend": "spl_hf.backends.hf",
    "BoundaryError": "spl_hf.backends.hf",
    "VLLMBackend": "spl_hf.backends.vllm",
    "PairwiseJudge": "spl_hf.backends.judge",
    "JudgeConfig": "spl_hf.backends.judge",
    "TenetJudgement": "spl_hf.backends.judge",
    "score_from_probs": "spl_hf.backends.judge",
    "parse_pairs": "spl_hf.backends.judge",
    "AttributeLabeler": "spl_hf.backends.labeler",
    "LabelerConfig": "spl_hf.backends.labeler",
    "items_from_rows": "spl_hf.backends.labeler",
    "read_labels": "spl_hf.backends.labeler",
    "VerdictJudge": "spl_hf.backends.verdict",
    "verdict_preference": "spl_hf.backends.verdict",
    "CandidateGenerator": "spl_hf.backends.generate",
    "GenerationConfig": "spl_hf.backends.generate",
    "INSTRUCTIONS": "spl_hf.backends.generate",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'spl_hf.backends' has no attribute {name!r}")


# Engine settings only vLLM takes (ModelArgs passes them to every backend).
VLLM_ONLY = (
    "gpu_memory_utilization",
    "tensor_parallel_size",
    "max_model_len",
    "enable_prefix_caching",
    "enforce_eager",
)


def make_backend(kind: str = "hf", model: str | None = None, **kwargs: Any) -> Backend | HFBackend:
    """``hf`` (transformers, default) or ``vllm`` (needs the [vllm] extra)."""
    if kind == "hf":
        from spl_hf.backends.hf import HFBackend

        for name in VLLM_ONLY:
            kwargs.pop(name, None)
        return HFBackend.load(model, **kwargs)
    if kind == "vllm":
        from spl_hf.backends.vllm import VLLMBackend

        kwargs.pop("threads", None)
        kwargs.pop("chunk_size", None)
        return VLLMBackend(model, **kwargs)
    raise ValueError(f"backend: expected 'hf' or 'vllm', got {kind!r}")


__all__ = [
    "Backend",
    "Generation",
    "InputError",
    "LabelScores",
    "ModelInfo",
    "ResultCache",
    "cache_root",
    "content_key",
    "load_model",
    "make_backend",
    "prepare_embedded",
    "resolve_model",
    *_LAZY,
]
