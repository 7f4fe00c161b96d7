"""`spl-hf hub serve`: a local Hub server for offline tests of publishing pipelines.

The server is the ``[server]`` extra (``spl_hf_hub_server``); its settings live in the core, so
without it ``--help`` still works and running the command says what to install (exit 2).
"""

from __future__ import annotations

import argparse
from typing import Any

DESCRIPTION = (
    "Serve enough of the Hub API for huggingface_hub (create_repo, upload_folder/create_commit "
    "with HF_HUB_DISABLE_XET=1, snapshot_download, hf_hub_download) and datasets.load_dataset to work "
    "against HF_ENDPOINT=http://HOST:PORT. Repos persist under --root; commits are atomic. Give the token "
    "through $SPL_HF_HUB_TOKEN or --token_file: an argument is visible to every user in `ps`. Needs the "
    "[server] extra (pip install 'spl_hf[server]')."
)


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str, action: str | None = None) -> None:
    from spl_hf.configs import add_config_parser
    from spl_hf.hub import HubServeConfig, HubServeTokenArgs

    p = sub.add_parser(name, help=help_text, description="A local Hugging Face Hub server.")
    hub_sub = p.add_subparsers(dest="hub_command", metavar="ACTION", required=True)
    s = add_config_parser(
        hub_sub,
        "serve",
        (HubServeConfig, HubServeTokenArgs),
        help="serve repos stored under --root over HTTP",
        description=DESCRIPTION,
    )
    s.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import sys

    from spl_hf.configs import configs_from_args
    from spl_hf.hub import server_package

    config, inline = configs_from_args(args)
    server = server_package()  # ServerMissingError (exit 2) without the [server] extra
    token = config.resolve_token()
    if inline.token:
        print(
            "warning: --token is visible to other users in the process list (ps); "
            "set SPL_HF_HUB_TOKEN or use --token_file",
            file=sys.stderr,
        )
        token = inline.token
    httpd = _bind(server, config, token)
    print(f"serving on {httpd.url}", flush=True)
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        httpd.server_close()
    return 0


def _bind(server: Any, config: Any, token: str | None) -> Any:
    """The server on its port; a port in use is the user's to change, said in one line, and a root
    folder this call created for nothing is removed again (it held nothing of the user's)."""
    import errno
    import shutil
    from pathlib import Path

    from spl_hf.errors import SplHfError

    root = Path(config.root)
    new_root = not root.exists()
    try:
        return server.HubHTTPServer(config, token)
    except OSError as exc:
        if exc.errno not in (errno.EADDRINUSE, errno.EADDRNOTAVAIL, errno.EACCES):
            raise
        if new_root and _only_server_files(root):
            shutil.rmtree(root)
        why = {errno.EADDRINUSE: "is in use", errno.EACCES: "needs privileges"}.get(
            exc.errno, "is not available"
        )
        raise SplHfError(
            f"cannot listen on {config.host}:{config.port}: the port {why} ({exc.strerror}); "
            "choose another --port, or --port 0 for a free one"
        ) from None


def _only_server_files(root: Any) -> bool:
    """The root holds only what starting the server made: its lock file (server.lock) and empty folders."""
    return all((p.is_dir() and not any(p.iterdir())) or p.name == "server.lock" for p in root.rglob("*"))
