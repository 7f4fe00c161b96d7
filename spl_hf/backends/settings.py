"""The model a command or release runs: which, on which backend, with how many threads and tokens.

One dataclass serves the model-backed subcommands (``judge``, ``label``, ``generate``) and the
release builders; its checks, and the context-length check against the model's config, run
before any weights are loaded.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal


def check_positive(name: str, value: int | None, optional: bool = False) -> None:
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"--{name} must be a positive integer, got {value!r}")


@dataclass
class ModelArgs:
    """Model and engine"""

    model: str | None = field(
        default=None, metadata={"help": "Hub id or local folder (default: the embedded SmolLM2-135M)."}
    )
    threads: int = field(default=1, metadata={"help": "torch CPU threads (1 measured fastest on 2 cores)."})
    max_length: int | None = field(
        default=None, metadata={"help": "Token limit per input (default and maximum: the model's context)."}
    )
    backend: Literal["hf", "vllm"] = field(default="hf", metadata={"help": "vllm needs the [vllm] extra."})

    def __post_init__(self) -> None:
        check_positive("threads", self.threads)
        check_positive("max_length", self.max_length, optional=True)
        if self.backend not in ("hf", "vllm"):
            raise ValueError(f"--backend must be hf or vllm, got {self.backend!r}")


def check_context(model: ModelArgs) -> None:
    """Reject a --max_length beyond the model's context, reading its config only (no weights)."""
    if model.max_length is None:
        return
    from spl_hf.backends.loading import resolve_model

    path, _, _ = resolve_model(model.model)
    config = Path(path) / "config.json"
    if not config.is_file():
        return
    meta = json.loads(config.read_text(encoding="utf-8"))
    context = meta.get("max_position_embeddings") or meta.get("n_positions")
    if isinstance(context, int) and model.max_length > context:
        raise ValueError(f"--max_length {model.max_length} exceeds the model's context of {context} tokens")


def load_backend(model: ModelArgs, **kw: Any) -> Any:
    from spl_hf.backends import make_backend

    check_context(model)
    return make_backend(model.backend, model.model, threads=model.threads, max_length=model.max_length, **kw)
