"""`spl-hf hub serve`: a local Hub server for offline tests of publishing pipelines.

The server is the ``[server]`` extra (``spl_hf_hub_server``); its settings live in the core, so
without it ``--help`` still works and running the command says what to install (exit 2).
"""

from __future__ import annotations

import argparse

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
    httpd = server.HubHTTPServer(config, token)
    print(f"serving on {httpd.url}", flush=True)
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        httpd.server_close()
    return 0
