"""Hub layout, cards, publishing and a local Hub server.

Attributes load on first use, so ``spl_hf.hub.server`` (stdlib HTTP only) starts without
importing ``datasets``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spl_hf.lazy import lazy_exports

DEFAULT_MAX_SHARD_SIZE = (
    "500MB"  # largest parquet shard of a build (Arrow size); here so configs need no pyarrow
)

if TYPE_CHECKING:
    from spl_hf.hub._publish import PublishResult, card_configs, publish
    from spl_hf.hub.card import CARD_INPUTS, card_inputs, regenerate_card, render_card
    from spl_hf.hub.config import CardArgs, HubServeTokenArgs, PublishFolderArgs
    from spl_hf.hub.folder import ConfigData, WrittenFolder, write_dataset_folder, yaml_metadata
    from spl_hf.hub.roundtrip import split_digests
    from spl_hf.hub.server import HubHTTPServer, RunningServer
    from spl_hf.hub.server.config import HubServeConfig
    from spl_hf.manifest import verify_manifest

__all__ = [
    "CARD_INPUTS",
    "DEFAULT_MAX_SHARD_SIZE",
    "CardArgs",
    "ConfigData",
    "HubHTTPServer",
    "HubServeConfig",
    "HubServeTokenArgs",
    "PublishFolderArgs",
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

# module -> the names this face re-exports from it (as imported under TYPE_CHECKING, for readers)
_EXPORTS: dict[str, tuple[str, ...]] = {
    "spl_hf.hub._publish": ("PublishResult", "card_configs", "publish"),
    "spl_hf.hub.card": ("CARD_INPUTS", "card_inputs", "regenerate_card", "render_card"),
    "spl_hf.hub.config": ("CardArgs", "HubServeTokenArgs", "PublishFolderArgs"),
    "spl_hf.hub.folder": ("ConfigData", "WrittenFolder", "write_dataset_folder", "yaml_metadata"),
    "spl_hf.hub.roundtrip": ("split_digests",),
    "spl_hf.hub.server": ("HubHTTPServer", "RunningServer"),
    "spl_hf.hub.server.config": ("HubServeConfig",),
    "spl_hf.manifest": ("verify_manifest",),
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
