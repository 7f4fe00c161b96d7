"""``spl-hf model prepare|info``: build the embedded model's safetensors cache and show model identity."""

from __future__ import annotations

import argparse

from spl_hf.cli._backend_args import report


def add_parser(subparsers: argparse._SubParsersAction, name: str, help_text: str) -> None:
    p = subparsers.add_parser(
        name,
        help=help_text,
        description=(
            "prepare: convert the embedded GGUF model once into a safetensors folder under $SPL_HF_CACHE "
            "(default ~/.cache/spl_hf) so later loads take seconds. info: print id, revision/file hash, "
            "path, context length and parameter count of a model (loads it)."
        ),
    )
    p.add_argument("action", choices=("prepare", "info"))
    p.add_argument("--model", default=None, help="Hub id or local folder (info only; default: embedded)")
    p.add_argument("--force", action="store_true", help="prepare: rebuild the cache even if present")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from spl_hf.backends.loading import load_model, prepare_embedded

    if args.action == "prepare":
        if args.model not in (None, "embedded"):
            raise ValueError("--model: prepare only builds the embedded model's cache")
        path, info = prepare_embedded(force=args.force)
        report(args, {**info.to_dict(), "path": str(path)})
        return 0
    lm = load_model(args.model)
    report(
        args,
        {
            **lm.info.to_dict(),
            "architecture": type(lm.model).__name__,
            "parameters": sum(p.numel() for p in lm.model.parameters()),
            "context_length": getattr(lm.model.config, "max_position_embeddings", None),
            "has_chat_template": bool(lm.tokenizer.chat_template),
        },
    )
    return 0
