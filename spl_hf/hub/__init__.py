"""Publishing a released dataset folder to the Hub, on top of :mod:`spl_hf.audit` and
:mod:`spl_hf.dataset` (the folder format and its card live there).

Attributes load on first use. The local Hub server is a distribution of its own,
``spl_hf_hub_server`` (the ``[server]`` extra).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spl_hf.lazy import lazy_exports

if TYPE_CHECKING:
    from spl_hf.hub._publish import PublishResult, publish
    from spl_hf.hub.config import CardArgs, HubServeConfig, HubServeTokenArgs, PublishFolderArgs
    from spl_hf.hub.local_server import SERVER_INSTALL_HINT, ServerMissingError, server_package
    from spl_hf.hub.roundtrip import split_digests
    from spl_hf.manifest import verify_manifest

# module -> the names this face re-exports from it (as imported under TYPE_CHECKING, for readers)
_EXPORTS: dict[str, tuple[str, ...]] = {
    "spl_hf.hub._publish": (
        "PublishResult",
        "publish",
    ),
    "spl_hf.hub.config": (
        "CardArgs",
        "HubServeConfig",
        "HubServeTokenArgs",
        "PublishFolderArgs",
    ),
    "spl_hf.hub.local_server": (
        "SERVER_INSTALL_HINT",
        "ServerMissingError",
        "server_package",
    ),
    "spl_hf.hub.roundtrip": ("split_digests",),
    "spl_hf.manifest": ("verify_manifest",),
}

__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
