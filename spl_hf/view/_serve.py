"""Serve a release with the viewer until interrupted (binds 127.0.0.1 unless told otherwise)."""

from __future__ import annotations

import socket
from collections.abc import Callable

from spl_hf.errors import SplHfError
from spl_hf.explain import open_release
from spl_hf.view.config import ViewArgs


def free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def launch(demo, host: str, port: int) -> str:
    """Start ``demo`` (a :func:`build_app` app) on ``host:port`` without blocking; its URL."""
    from spl_hf.view.style import CSS

    demo.launch(
        server_name=host,
        server_port=port,
        prevent_thread_lock=True,
        quiet=True,
        ssr_mode=False,
        share=False,
        footer_links=[],
        css=CSS,
    )
    return f"http://{host}:{port}/"


def serve(args: ViewArgs, revision: str | None = None, on_ready: Callable[[str], None] | None = None) -> None:
    """Open the release, start the app, call ``on_ready(url)``, and block until Ctrl-C."""
    try:
        import gradio  # noqa: F401
    except ModuleNotFoundError:
        raise SplHfError("spl-hf view needs gradio: pip install 'spl_hf[viewer]'") from None
    from spl_hf.view.app import build_app
    from spl_hf.view.session import ViewerSession

    with open_release(args.path, revision) as release:
        session = ViewerSession(release, audit=args.audit, clip=args.clip)
        demo = build_app(session, args.page_size)
        url = launch(demo, args.host, args.port or free_port(args.host))
        session.preload()
        (on_ready or print)(url if on_ready else f"serving on {url}")
        try:
            demo.block_thread()
        finally:
            demo.close()
