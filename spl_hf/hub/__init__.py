"""Hub layout, cards and publishing.

Attributes load on first use. The local Hub server is a distribution of its own,
``spl_hf_hub_server`` (the ``[server]`` extra).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spl_hf.lazy import lazy_exports

DEFAULT_MAX_SHARD_SIZE = (
    "500MB"  # largest parquet shard of a build (Arrow size); here so configs need no pyarrow
)

if TYPE_CHECKING:
    from spl_hf.hub.card import CARD_INPUTS, card_inputs, regenerate_card, render_card
    from spl_hf.hub.config import CardArgs, HubServeConfig, HubServeTokenArgs, PublishFolderArgs
    from spl_hf.hub.folder import ConfigData, WrittenFolder, write_dataset_folder, yaml_metadata
    from spl_hf.hub.local_server import SERVER_INSTALL_HINT, ServerMissingError, server_package
    from spl_hf.hub.publish import PublishResult, card_configs, provenance_section, publish
    from spl_hf.hub.roundtrip import split_digests
    from spl_hf.manifest import verify_manifest

__all__ = [
    "CARD_INPUTS",
    "DEFAULT_MAX_SHARD_SIZE",
    "SERVER_INSTALL_HINT",
    "CardArgs",
    "ConfigData",
    "HubServeConfig",
    "HubServeTokenArgs",
    "PublishFolderArgs",
    "PublishResult",
    "ServerMissingError",
    "WrittenFolder",
    "card_configs",
    "card_inputs",
    "provenance_section",
    "publish",
    "regenerate_card",
    "render_card",
    "server_package",
    "split_digests",
    "verify_manifest",
    "write_dataset_folder",
    "yaml_metadata",
]

__getattr__, __dir__ = lazy_exports(__name__, __file__)
