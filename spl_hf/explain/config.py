"""Settings of ``spl-hf explain`` (no heavy import: the CLI reads them for ``--help``)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ExplainArgs:
    """Which row to explain"""

    path: str = field(
        metadata={"help": "Release folder, or a Hub dataset repo id (with --revision).", "positional": True}
    )
    row: list[str] = field(
        metadata={
            "help": "The row: a tenet row's scenario_id, an SPL row's pair_id, or CONFIG SPLIT INDEX.",
            "positional": True,
            "nargs": "+",
            "metavar": "ROW",
        }
    )
    clip: int = field(default=400, metadata={"help": "Show at most this many characters of each text."})
    audit: bool = field(
        default=True,
        metadata={
            "help": "Run the release's audit and give its verdict on this row.",
            "negated_help": "Skip the audit (the row's own numbers are still recomputed).",
        },
    )

    def __post_init__(self) -> None:
        from spl_hf.errors import SplHfError

        if self.clip < 20:
            raise SplHfError(f"--clip must be at least 20 characters, got {self.clip}")
        if len(self.row) not in (1, 3):
            raise SplHfError(f"ROW is one id or CONFIG SPLIT INDEX, got {len(self.row)} words: {self.row}")
