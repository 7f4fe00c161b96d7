"""Settings of ``spl-hf publish``, ``spl-hf card`` and ``spl-hf hub serve`` (no heavy import)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class PublishFolderArgs:
    """What to publish"""

    path: str = field(metadata={"help": "Dataset folder written by an spl-hf build.", "positional": True})
    message: str | None = field(default=None, metadata={"help": "Commit message."})


@dataclass
class CardArgs:
    """Card"""

    path: str = field(metadata={"help": "Dataset folder written by an spl-hf build.", "positional": True})
    repo_id: str | None = field(default=None, metadata={"help": "Repo id for the card's loading example."})
    template: str | None = field(
        default=None, metadata={"help": "Jinja template file (default: the one the build used)."}
    )


@dataclass
class HubServeArgs:
    """Server"""

    root: str = field(metadata={"help": "Folder holding the repositories (created if missing)."})
    host: str = field(default="127.0.0.1", metadata={"help": "Interface to listen on."})
    port: int = field(default=0, metadata={"help": "Port; 0 picks a free one (printed)."})
    token: str | None = field(
        default=None,
        metadata={
            "help": "Require this token for writes and private repos (default: $SPL_HF_HUB_TOKEN; none = "
            "open server). Prefer the variable: a flag is visible to other users in the process list."
        },
    )
    verbose: bool = field(default=False, metadata={"help": "Log request lines to stderr."})
