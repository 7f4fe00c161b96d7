"""`spl-hf hub serve`: a local Hub server for offline tests of publishing pipelines.

The server is the ``[server]`` extra (``spl_hf_hub_server``); without it the command is still listed
and answers with what to install.
"""

from __future__ import annotations

import argparse

DESCRIPTION = (
    "Serve enough of the Hub API for huggingface_hub (create_repo, upload_folder/create_commit "
    "with HF_HUB_DISABLE_XET=1, snapshot_download, hf_hub_download) and datasets.load_dataset to work "
    "against HF_ENDPOINT=http://HOST:PORT. Repos persist under --root; commits are atomic. Give the token "
    "through $SPL_HF_HUB_TOKEN or --token_file: an argument is visible to every user in `ps`."
)


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str) -> None:
    from spl_hf.configs import add_config_parser
    from spl_hf.hub import SERVER_INSTALL_HINT, ServerMissingError, server_package

    p = sub.add_parser(name, help=help_text, description="A local Hugging Face Hub server.")
    hub_sub = p.add_subparsers(dest="hub_command", metavar="ACTION", required=True)
    help_serve = "serve repos stored under --root over HTTP"
    try:
        config = server_package().config
    except ServerMissingError:
        s = hub_sub.add_parser(
            "serve", help=help_serve, description=f"{DESCRIPTION} Not available: {SERVER_INSTALL_HINT}."
        )
        s.set_defaults(func=_missing)
        return
    s = add_config_parser(
        hub_sub,
        "serve",
        (config.HubServeConfig, config.HubServeTokenArgs),
        help=help_serve,
        description=DESCRIPTION,
    )
    s.set_defaults(func=run)


def _missing(args: argparse.Namespace) -> int:
    from spl_hf.hub import server_package

    server_package()  # raises ServerMissingError: one line, exit 2
    return 2


def run(args: argparse.Namespace) -> int:
    import sys

    from spl_hf.configs import configs_from_args
    from spl_hf.hub import server_package

    config, inline = configs_from_args(args)
    token = config.resolve_token()
    if inline.token:
        print(
            "warning: --token is visible to other users in the process list (ps); "
            "set SPL_HF_HUB_TOKEN or use --token_file",
            file=sys.stderr,
        )
        token = inline.token
    httpd = server_package().HubHTTPServer(config, token)
    print(f"serving on {httpd.url}", flush=True)
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        httpd.server_close()
    return 0
