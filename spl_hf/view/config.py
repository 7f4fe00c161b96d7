"""Settings of ``spl-hf view`` (no heavy import: the CLI reads them for ``--help``)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ViewArgs:
    """What to serve, and where"""

    path: str = field(
        metadata={"help": "Release folder, or a Hub dataset repo id (with --revision).", "positional": True}
    )
    host: str = field(
        default="127.0.0.1",
        metadata={
            "help": "Address to bind (127.0.0.1: this machine only; anything else exposes the release)."
        },
    )
    port: int = field(default=7860, metadata={"help": "Port to serve on (0: a free port)."})
    page_size: int = field(default=50, metadata={"help": "Rows per page of the rows table."})
    clip: int = field(default=400, metadata={"help": "Characters of each text shown in a row's explanation."})
    audit: bool = field(
        default=True,
        metadata={
            "help": "Give the audit's verdict in each explanation (the release is audited once, on first use).",
            "negated_help": "Do not audit (explanations still recompute each row's own numbers).",
        },
    )

    def __post_init__(self) -> None:
        from spl_hf.errors import SplHfError

        if not 1 <= self.page_size <= 1000:
            raise SplHfError(f"--page_size must be in [1, 1000], got {self.page_size}")
        if not 0 <= self.port <= 65535:
            raise SplHfError(f"--port must be in [0, 65535], got {self.port}")
        if self.clip < 20:
            raise SplHfError(f"--clip must be at least 20 characters, got {self.clip}")
