"""Settings of ``spl-hf publish`` and ``spl-hf card`` (no heavy import); those of ``spl-hf hub serve``
live with the server (``spl_hf_hub_server.config``)."""

from __future__ import annotations

from dataclasses import dataclass, field


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


@dataclass
class CardArgs:
    """Card"""

    path: str = field(metadata={"help": "Dataset folder written by an spl-hf build.", "positional": True})
    repo_id: str | None = field(default=None, metadata={"help": "Repo id for the card's loading example."})
    template: str | None = field(
        default=None, metadata={"help": "Jinja template file (default: the one the build used)."}
    )
