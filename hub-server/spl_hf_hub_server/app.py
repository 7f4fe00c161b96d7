"""The local Hub server: its store, token check, limits and background sweep, on a thread or not.

Each server process holds a shared lock on ``<root>/server.lock`` while it runs. A server that
starts and finds nobody else holding it knows that every temporary file under the root belongs to a
process that is gone, whatever its age, and removes them all; otherwise it removes only those that
are old enough and that no writer holds (see :meth:`Store.sweep_temporaries`).
"""

from __future__ import annotations

import fcntl
import os
import sys
import threading
from pathlib import Path

from spl_hf.hub.config import HubServeConfig
from spl_hf_hub_server.auth import Auth
from spl_hf_hub_server.handler import HubHandler
from spl_hf_hub_server.http import BoundedThreadingServer
from spl_hf_hub_server.store import Store

ROOT_LOCK = "server.lock"


def claim_root(root: Path) -> tuple[int, bool]:
    """Open and share-lock the root's server lock: (its fd, whether no other server held it)."""
    root.mkdir(parents=True, exist_ok=True)
    fd = os.open(root / ROOT_LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        alone = True
    except BlockingIOError:
        alone = False
    return fd, alone


class HubHTTPServer(BoundedThreadingServer):
    """The server: its store, its token check and its limits (:class:`HubServeConfig`)."""

    def __init__(self, config: HubServeConfig, token: str | None = None) -> None:
        self.config = config
        self.store = Store(config.root)
        self.auth = Auth(token)
        self.verbose = config.verbose
        self._root_lock, alone = claim_root(Path(config.root))
        # Before the socket: TCPServer calls server_close() itself when the bind fails (a port in use).
        self._stopped = threading.Event()
        try:
            # Left by a killed server, commit or upload. Alone on the root, no temporary file can
            # have a live writer, so even one created an instant before the kill goes.
            self.store.sweep_temporaries(min_age_s=0.0 if alone else None)
            fcntl.flock(self._root_lock, fcntl.LOCK_SH)  # from now on, others see a live server
            super().__init__(
                (config.host, config.port), HubHandler, config.max_connections, config.header_timeout_s
            )
        except BaseException:
            self._release_root()  # a port in use, say: this process holds no lock on the root
            raise
        self._sweeper = threading.Thread(target=self._sweep, name="spl-hf-hub-sweep", daemon=True)
        self._sweeper.start()

    def _sweep(self) -> None:
        while not self._stopped.wait(self.config.tmp_sweep_interval_s):
            try:
                self.store.sweep_temporaries()
            except OSError as exc:  # a vanished repo mid-sweep: the next sweep sees the new state
                sys.stderr.write(f"sweep of temporary files failed: {exc}\n")

    def server_close(self) -> None:
        self._stopped.set()
        super().server_close()
        self._release_root()

    def _release_root(self) -> None:
        if self._root_lock >= 0:
            os.close(self._root_lock)  # releases the shared lock
            self._root_lock = -1

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"


class RunningServer:
    """A server on a background thread (tests, the demo); ``stop()`` shuts it down.

    ``settings`` are further :class:`HubServeConfig` fields (limits, timeouts).
    """

    def __init__(
        self, root: str, host: str = "127.0.0.1", port: int = 0, token: str | None = None, **settings: object
    ) -> None:
        self.httpd = HubHTTPServer(HubServeConfig(root=root, host=host, port=port, **settings), token)
        self.url = self.httpd.url
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="spl-hf-hub", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(timeout=10)

    def __enter__(self) -> RunningServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
