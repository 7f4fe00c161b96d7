"""Where the local Hub server comes from: the ``spl_hf_hub_server`` distribution (the ``[server]``
extra), never part of the core install, since publishing to the real Hub never needs it.

The core reaches it only through :func:`server_package`, at the moment a command needs it
(``spl-hf hub serve``, the demo's publish step), so a core install works without it and says what
to install when it is asked for.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from spl_hf.errors import SplHfError

SERVER_PACKAGE = "spl_hf_hub_server"
SERVER_INSTALL_HINT = (
    "the local Hub server is not installed: pip install 'spl_hf[server]' "
    "(from a source checkout: pip install ./hub-server)"
)


class ServerMissingError(SplHfError):
    """The local Hub server was asked for, but the ``[server]`` extra is not installed."""


def server_package() -> ModuleType:
    """The ``spl_hf_hub_server`` package; :class:`ServerMissingError` when it is not installed."""
    try:
        return importlib.import_module(SERVER_PACKAGE)
    except ModuleNotFoundError as exc:
        if exc.name != SERVER_PACKAGE:
            raise  # the server is there but one of its own imports is broken: a bug, with its traceback
        raise ServerMissingError(SERVER_INSTALL_HINT) from None
