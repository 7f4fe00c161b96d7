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
    from spl_hf.hub._publish import PublishResult, card_configs, provenance_section, publish
    from spl_hf.hub.card import CARD_INPUTS, card_inputs, regenerate_card, render_card
    from spl_hf.hub.config import CardArgs, HubServeConfig, HubServeTokenArgs, PublishFolderArgs
    from spl_hf.hub.folder import ConfigData, WrittenFolder, write_dataset_folder, yaml_metadata
    from spl_hf.hub.local_server import SERVER_INSTALL_HINT, ServerMissingError, server_package
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

# module -> the names this face re-exports from it (as imported under TYPE_CHECKING, for readers)
_EXPORTS: dict[str, tuple[str, ...]] = {
    "spl_hf.hub._publish": (
        "PublishResult",
        "card_configs",
        "provenance_section",
        "publish",
    ),
    "spl_hf.hub.card": (
        "CARD_INPUTS",
        "card_inputs",
        "regenerate_card",
        "render_card",
    ),
    "spl_hf.hub.config": (
        "CardArgs",
        "HubServeConfig",
        "HubServeTokenArgs",
        "PublishFolderArgs",
    ),
    "spl_hf.hub.folder": (
        "ConfigData",
        "WrittenFolder",
        "write_dataset_folder",
        "yaml_metadata",
    ),
    "spl_hf.hub.local_server": (
        "SERVER_INSTALL_HINT",
        "ServerMissingError",
        "server_package",
    ),
    "spl_hf.hub.roundtrip": ("split_digests",),
    "spl_hf.manifest": ("verify_manifest",),
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
