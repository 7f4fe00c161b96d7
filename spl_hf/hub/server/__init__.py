"""A small local Hub server: enough of the Hub API for the unmodified clients to push and load."""

from spl_hf.hub.server.app import HubHTTPServer, RunningServer
from spl_hf.hub.server.store import Store, StoreError

__all__ = ["HubHTTPServer", "RunningServer", "Store", "StoreError"]
