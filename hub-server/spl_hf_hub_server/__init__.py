"""A small local Hub server: enough of the Hub API for the unmodified clients to push and load.

Shipped as its own distribution (``spl-hf-hub-server``, installed by ``pip install 'spl_hf[server]'``)
because only offline tests of publishing need it; ``spl-hf hub serve`` runs it.
"""

from spl_hf.hub.config import HubServeConfig, HubServeTokenArgs
from spl_hf_hub_server.app import HubHTTPServer, RunningServer
from spl_hf_hub_server.errors import StoreError
from spl_hf_hub_server.store import Store

__all__ = ["HubHTTPServer", "HubServeConfig", "HubServeTokenArgs", "RunningServer", "Store", "StoreError"]
