"""Hub layout, cards, publishing and a local Hub server.

Attributes load on first use, so ``spl_hf.hub.server`` (stdlib HTTP only) starts without
importing ``datasets``.
"""

from __future__ import annotations

import importlib
from typing import Any

DEFAULT_MAX_SHARD_SIZE = (
    "500MB"  # largest parquet shard of a build (Arrow size); here so configs need no pyarrow
)

_EXPORTS = {
    "CARD_INPUTS": "spl_hf.hub.card",
    "RunningServer": "spl_hf.hub.server",
    "card_configs": "spl_hf.hub.publish",
    "card_inputs": "spl_hf.hub.card",
    "split_digests": "spl_hf.hub.roundtrip",
    "ConfigData": "spl_hf.hub.folder",
    "WrittenFolder": "spl_hf.hub.folder",
    "verify_manifest": "spl_hf.manifest",
    "write_dataset_folder": "spl_hf.hub.folder",
    "yaml_metadata": "spl_hf.hub.folder",
    "render_card": "spl_hf.hub.card",
    "regenerate_card": "spl_hf.hub.card",
    "publish": "spl_hf.hub.publish",
    "PublishResult": "spl_hf.hub.publish",
}

__all__ = [
    "CARD_INPUTS",
    "DEFAULT_MAX_SHARD_SIZE",
    "ConfigData",
    "PublishResult",
    "RunningServer",
    "WrittenFolder",
    "card_configs",
    "card_inputs",
    "publish",
    "regenerate_card",
    "render_card",
    "split_digests",
    "verify_manifest",
    "write_dataset_folder",
    "yaml_metadata",
]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'spl_hf.hub' has no attribute {name!r}")
