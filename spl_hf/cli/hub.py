"""`spl-hf hub serve`: a local Hub server for offline tests of publishing pipelines."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text, description="A local Hugging Face Hub server.")
    hub_sub = p.add_subparsers(dest="hub_command", metavar="ACTION", required=True)
    s = hub_sub.add_parser(
        "serve",
        help="serve repos stored under --root over HTTP",
        description="Serve enough of the Hub API for huggingface_hub (create_repo, upload_folder/create_commit "
        "with HF_HUB_DISABLE_XET=1, snapshot_download, hf_hub_download) and datasets.load_dataset to work "
        "against HF_ENDPOINT=http://HOST:PORT. Repos persist under --root; commits are atomic. Give the token "
        "through $SPL_HF_HUB_TOKEN or --token-file: an argument is visible to every user in `ps`.",
    )
    s.add_argument("--root", required=True, help="folder holding the repositories (created if missing)")
    s.add_argument("--host", default="127.0.0.1", help="interface to listen on")
    s.add_argument("--port", type=int, default=0, help="port; 0 picks a free one (printed)")
    s.add_argument(
        "--token",
        default=None,
        help="DISCOURAGED: a token given here is visible to every user of the machine in `ps`; set "
        "$SPL_HF_HUB_TOKEN or use --token-file instead (with none of the three, the server is open)",
    )
    s.add_argument(  # CLI-MERGE: HubServeConfig.token_file
        "--token-file",
        "--token_file",
        dest="token_file",
        default=None,
        help="file whose first line is the token required for writes and private repos (the way to give it)",
    )
    s.add_argument("--verbose", action="store_true", help="log request lines to stderr")
    s.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import sys

    from spl_hf.hub.server import HubHTTPServer, HubServeConfig

    config = HubServeConfig(
        root=args.root, host=args.host, port=args.port, token_file=args.token_file, verbose=args.verbose
    )
    token = config.resolve_token()
    if args.token:
        print(
            "warning: --token is visible to other users in the process list (ps); "
            "set SPL_HF_HUB_TOKEN or use --token-file",
            file=sys.stderr,
        )
        token = args.token
    httpd = HubHTTPServer(config, token)
    print(f"serving on {httpd.url}", flush=True)
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        httpd.server_close()
    return 0
