"""`spl-hf hub serve`: a local Hub server for offline tests of publishing pipelines."""

from __future__ import annotations

import argparse
import os


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text, description="A local Hugging Face Hub server.")
    hub_sub = p.add_subparsers(dest="hub_command", metavar="ACTION", required=True)
    s = hub_sub.add_parser(
        "serve",
        help="serve repos stored under --root over HTTP",
        description="Serve enough of the Hub API for huggingface_hub (create_repo, upload_folder/create_commit "
        "with HF_HUB_DISABLE_XET=1, snapshot_download, hf_hub_download) and datasets.load_dataset to work "
        "against HF_ENDPOINT=http://HOST:PORT. Repos persist under --root; commits are atomic.",
    )
    s.add_argument("--root", required=True, help="folder holding the repositories (created if missing)")
    s.add_argument("--host", default="127.0.0.1", help="interface to listen on")
    s.add_argument("--port", type=int, default=0, help="port; 0 picks a free one (printed)")
    s.add_argument(
        "--token",
        default=None,
        help="require this token for writes and private repos (default: $SPL_HF_HUB_TOKEN; none = open server)",
    )
    s.add_argument("--verbose", action="store_true", help="log request lines to stderr")
    s.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from spl_hf.hub.server import HubHTTPServer

    token = args.token or os.environ.get("SPL_HF_HUB_TOKEN") or None
    httpd = HubHTTPServer(args.root, args.host, args.port, token, verbose=args.verbose)
    print(f"serving on {httpd.url}", flush=True)
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        httpd.server_close()
    return 0
