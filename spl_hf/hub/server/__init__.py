"""A small local Hub server: enough of the Hub API for the unmodified clients to push and load."""

from spl_hf.hub.server.app import HubHTTPServer, RunningServer
from spl_hf.hub.server.config import HubServeConfig
from spl_hf.hub.server.errors import StoreError
from spl_hf.hub.server.store import Store

__all__ = ["HubHTTPServer", "HubServeConfig", "RunningServer", "Store", "StoreError"]
