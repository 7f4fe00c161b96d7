"""The engines a model runs on: one entry each in :data:`ENGINES`, the one table that names them.

``--backend``'s choices, its check, the factory (:func:`spl_hf.backends.factory.make_backend`) and
the settings recorded with every result all read this table, so a new engine is its module plus one
entry here. No heavy import: ``--help`` reads it.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Engine:
    """One engine: where its backend class is (imported only when one is built), which of the engine
    options it takes, and what sets it apart."""

    target: str  # "module:Class" or "module:Class.constructor"
    options: tuple[str, ...]  # the options (of any engine's) this one takes; others are dropped for it
    own: tuple[str, ...] = ()  # ModelArgs settings passed, and recorded with results, only on this engine
    served: bool = False  # a model behind a server: it needs --base_url, and its context is the server's

    def load(self) -> Any:
        module, _, attrs = self.target.partition(":")
        obj: Any = importlib.import_module(module)
        for attr in attrs.split("."):
            obj = getattr(obj, attr)
        return obj


# vLLM's engine settings: recorded with every run's settings (whatever its engine), taken by vLLM only.
VLLM_OPTIONS = (
    "gpu_memory_utilization",
    "tensor_parallel_size",
    "max_model_len",
    "enable_prefix_caching",
    "enforce_eager",
)
SERVED_OPTIONS = ("base_url", "tokenizer", "concurrency", "request_timeout", "retries")

ENGINES: dict[str, Engine] = {
    "hf": Engine(
        "spl_hf.backends.hf:HFBackend.load", ("threads", "chunk_size", "dtype", "gguf_file", "labels")
    ),
    "vllm": Engine("spl_hf.backends.vllm:VLLMBackend", ("dtype", "gguf_file", "labels", *VLLM_OPTIONS)),
    "openai": Engine(
        "spl_hf.backends.openai_api:OpenAIBackend", SERVED_OPTIONS, own=SERVED_OPTIONS, served=True
    ),
}
ENGINE_NAMES = tuple(ENGINES)


def engine(name: str) -> Engine:
    """The entry of ``name``; an unknown name is bad input, named with the choices."""
    from spl_hf.errors import SplHfError

    if name not in ENGINES:
        *first, last = ENGINES
        raise SplHfError(f"--backend must be {', '.join(first)} or {last}, got {name!r}")
    return ENGINES[name]


def options_for(name: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    """``kwargs`` without the options of other engines that engine ``name`` does not take."""
    others = {o for e in ENGINES.values() for o in e.options} - set(engine(name).options)
    return {k: v for k, v in kwargs.items() if k not in others}
