"""The backend a ``--backend`` name means (its entry in :data:`spl_hf.backends.engines.ENGINES`), built
with the engine settings it takes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from spl_hf.backends.engines import engine, options_for
from spl_hf.backends.settings import ModelArgs, check_context, engine_kwargs

if TYPE_CHECKING:
    from spl_hf.backends.base import Backend
    from spl_hf.backends.hf import HFBackend


def make_backend(kind: str = "hf", model: str | None = None, **kwargs: Any) -> Backend | HFBackend:
    """The backend of engine ``kind`` (an entry of :data:`spl_hf.backends.engines.ENGINES`: ``hf``,
    transformers, the default; ``vllm``, the [vllm] extra; ``openai``, a served model), given the
    options it takes of ``kwargs``."""
    return engine(kind).load()(model, **options_for(kind, kwargs))


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
