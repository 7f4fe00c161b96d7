"""Settings of ``spl-hf publish``, ``spl-hf card`` and ``spl-hf hub serve`` (no heavy import).

``spl-hf hub serve`` runs the local Hub server, a distribution of its own (the ``[server]`` extra);
its settings live here with the command, so ``--help`` and recipes read them without it.

The server's token is never a default nor an argument shown by ``ps``: it comes from
``$SPL_HF_HUB_TOKEN`` or from ``token_file`` (one line, read at start). The limits bound what one
client can make the server hold: a body larger than its route's cap is refused with 413 before it is
read, a connection idle for ``idle_timeout_s``, or still sending a request's headers after
``header_timeout_s``, is closed, and at most ``max_connections`` are served at once (the rest get 503).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from spl_hf.errors import SplHfError


@dataclass
class PublishFolderArgs:
    """What to publish"""

    path: str = field(metadata={"help": "Dataset folder written by an spl-hf build.", "positional": True})
    message: str | None = field(default=None, metadata={"help": "Commit message."})
    sources: list[str] | None = field(
        default=None,
        metadata={
            "help": "Check every row against its source records before publishing, as `spl-hf audit "
            "--sources` does (tenet builds POOL=FILE, POOL=ORG/NAME@REVISION or a unified pairs file; SPL "
            "builds prompts=FILE candidates=FILE); the release records the files checked by sha256 "
            "(provenance.json, card).",
            "metavar": "SPEC",
        },
    )
    allow_empty: bool = field(
        default=False,
        metadata={
            "help": "Publish a build that holds no preference rows (its derivations and no-label reasons "
            "still audit); by default such a build is refused as an empty release."
        },
    )


@dataclass
class CardArgs:
    """Card"""

    path: str = field(metadata={"help": "Dataset folder written by an spl-hf build.", "positional": True})
    repo_id: str | None = field(default=None, metadata={"help": "Repo id for the card's loading example."})
    template: str | None = field(
        default=None, metadata={"help": "Jinja template file (default: the one the build used)."}
    )


@dataclass
class HubServeTokenArgs:
    """Token on the command line (discouraged)"""

    token: str | None = field(
        default=None,
        metadata={
            "help": "DISCOURAGED: a token given here is visible to every user of the machine in `ps`; set "
            "$SPL_HF_HUB_TOKEN or use --token_file instead (with none of the three, the server is open)."
        },
    )


TOKEN_ENV = "SPL_HF_HUB_TOKEN"


@dataclass
class HubServeConfig:
    """Server"""

    root: str = field(metadata={"help": "Folder holding the repositories (created if missing)."})
    host: str = field(default="127.0.0.1", metadata={"help": "Interface to listen on."})
    port: int = field(default=0, metadata={"help": "Port; 0 picks a free one (printed)."})
    token_file: str | None = field(
        default=None,
        metadata={
            "help": f"File whose first line is the token required for writes and private repos. "
            f"Without it, ${TOKEN_ENV} is used; with neither, the server is open to anyone who reaches it."
        },
    )
    verbose: bool = field(default=False, metadata={"help": "Log request lines (never headers) to stderr."})
    idle_timeout_s: float = field(
        default=60.0,
        metadata={"help": "Close a connection that sends nothing for this many seconds (headers or body)."},
    )
    header_timeout_s: float = field(
        default=30.0,
        metadata={"help": "The request line and headers must arrive within this many seconds in all."},
    )
    max_connections: int = field(
        default=64, metadata={"help": "Connections served at once; further ones are answered 503 and closed."}
    )
    max_json_body: int = field(
        default=16 * 1024 * 1024,
        metadata={
            "help": "Largest body, in bytes, of a JSON API call (create repo, paths-info, LFS batch...)."
        },
    )
    max_anonymous_body: int = field(
        default=1024 * 1024,
        metadata={
            "help": "Largest body, in bytes, of a call without a token where one is allowed (public reads)."
        },
    )
    max_commit_body: int = field(
        default=512 * 1024 * 1024,
        metadata={"help": "Largest NDJSON commit body in bytes (small files travel inline, base64)."},
    )
    max_upload_bytes: int = field(
        default=64 * 1024**3, metadata={"help": "Largest single LFS object accepted, in bytes."}
    )
    tmp_sweep_interval_s: float = field(
        default=600.0,
        metadata={"help": "How often partial uploads left by a killed upload or server are removed."},
    )

    def __post_init__(self) -> None:
        if self.idle_timeout_s <= 0:
            raise SplHfError(f"idle_timeout_s must be > 0, got {self.idle_timeout_s}")
        if self.header_timeout_s <= 0:
            raise SplHfError(f"header_timeout_s must be > 0, got {self.header_timeout_s}")
        if self.max_connections < 1:
            raise SplHfError(f"max_connections must be at least 1, got {self.max_connections}")
        for name in ("max_json_body", "max_anonymous_body", "max_commit_body", "max_upload_bytes"):
            if getattr(self, name) < 1:
                raise SplHfError(f"{name} must be at least 1 byte, got {getattr(self, name)}")
        if self.tmp_sweep_interval_s <= 0:
            raise SplHfError(f"tmp_sweep_interval_s must be > 0, got {self.tmp_sweep_interval_s}")

    def resolve_token(self) -> str | None:
        """The server token: the first line of ``token_file``, else ``$SPL_HF_HUB_TOKEN``, else none."""
        if self.token_file:
            path = Path(self.token_file)
            if not path.is_file():
                raise FileNotFoundError(f"--token_file {path}: no such file")
            token = path.read_text(encoding="utf-8").strip().splitlines()
            if not token or not token[0].strip():
                raise SplHfError(f"--token_file {path}: the file is empty")
            return token[0].strip()
        return os.environ.get(TOKEN_ENV) or None
