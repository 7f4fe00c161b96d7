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
    from spl_hf.hub.card import CARD_INPUTS, card_inputs, regenerate_card, render_card
    from spl_hf.hub.config import CardArgs, HubServeTokenArgs, PublishFolderArgs
    from spl_hf.hub.folder import ConfigData, WrittenFolder, write_dataset_folder, yaml_metadata
    from spl_hf.hub.publish import PublishResult, card_configs, provenance_section, publish
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
    "provenance_section",
    "publish",
    "regenerate_card",
    "render_card",
    "split_digests",
    "verify_manifest",
    "write_dataset_folder",
    "yaml_metadata",
]

__getattr__, __dir__ = lazy_exports(__name__, __file__)
