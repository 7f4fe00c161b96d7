"""Which backend class a ``--backend`` name means, and the engine settings each one takes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from spl_hf.backends.settings import ModelArgs, check_context, engine_kwargs
from spl_hf.errors import SplHfError

if TYPE_CHECKING:
    from spl_hf.backends.base import Backend
    from spl_hf.backends.hf import HFBackend

# Engine settings only vLLM takes (ModelArgs passes them to every backend).
VLLM_ONLY = (
    "gpu_memory_utilization",
    "tensor_parallel_size",
    "max_model_len",
    "enable_prefix_caching",
    "enforce_eager",
)
OPENAI_ONLY = ("base_url", "tokenizer", "concurrency", "request_timeout", "retries")


def make_backend(kind: str = "hf", model: str | None = None, **kwargs: Any) -> Backend | HFBackend:
    """``hf`` (transformers, default), ``vllm`` (needs the [vllm] extra) or ``openai`` (a served model)."""
    if kind == "openai":
        from spl_hf.backends.openai_api import OpenAIBackend

        for name in (*VLLM_ONLY, "threads", "chunk_size", "dtype", "gguf_file", "labels"):
            kwargs.pop(name, None)
        return OpenAIBackend(model, **kwargs)
    for name in OPENAI_ONLY:
        kwargs.pop(name, None)
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
    raise SplHfError(f"backend: expected 'hf', 'vllm' or 'openai', got {kind!r}")


def load_backend(model: ModelArgs, **kw: Any) -> Any:
    """The backend ``model`` names, its context checked first (reading its config, no weights)."""
    check_context(model)
    return make_backend(
        model.backend,
        model.model,
        threads=model.threads,
        max_length=model.max_length,
        **{**engine_kwargs(model), **kw},
    )
