"""``spl-hf model prepare|info``: build the embedded model's safetensors cache and show model identity."""

from __future__ import annotations

import argparse

from spl_hf.errors import SplHfError


def add_parser(
    subparsers: argparse._SubParsersAction, name: str, help_text: str, action: str | None = None
) -> None:
    from spl_hf.backends import ModelArgs, ModelCommandArgs
    from spl_hf.configs import JsonArgs, add_config_parser

    p = add_config_parser(
        subparsers,
        name,
        (ModelCommandArgs, ModelArgs, JsonArgs),
        help=help_text,
        description=(
            "prepare: convert the embedded GGUF model once into a safetensors folder under $SPL_HF_CACHE "
            "(default ~/.cache/spl_hf) so later loads take seconds. info: print id, revision/file hash, "
            "path, context length and parameter count of a model (loads it with transformers: --model and "
            "--threads apply, --backend and --max_length do not)."
        ),
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from spl_hf.backends import load_model, prepare_embedded
    from spl_hf.cli._backend_args import report
    from spl_hf.configs import configs_from_args

    command, m, js = configs_from_args(args)
    if m.backend != "hf" or m.max_length is not None:
        raise SplHfError(
            "--backend/--max_length: `model` loads with transformers; only --model and --threads apply"
        )
    if command.action == "prepare":
        if m.model not in (None, "embedded"):
            raise SplHfError("--model: prepare only builds the embedded model's cache")
        path, info = prepare_embedded(force=command.force)
        report(js.json, {**info.to_dict(), "path": str(path)})
        return 0
    lm = load_model(m.model, threads=m.threads)
    report(
        js.json,
        {
            **lm.info.to_dict(),
            "architecture": type(lm.model).__name__,
            "parameters": sum(p.numel() for p in lm.model.parameters()),
            "context_length": getattr(lm.model.config, "max_position_embeddings", None),
            "has_chat_template": bool(lm.tokenizer.chat_template),
        },
    )
    return 0
