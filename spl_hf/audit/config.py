"""Settings of ``spl-hf audit`` and ``spl-hf tables`` (no heavy import: the CLI reads them for ``--help``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from spl_hf.errors import SplHfError


@dataclass
class AuditArgs:
    """What to audit"""

    path: str = field(
        metadata={"help": "Dataset folder, or a Hub dataset repo id (with --revision).", "positional": True}
    )
    config_name: str | None = field(
        default=None, metadata={"help": "SPL builds: the dataset config to audit (default: every config)."}
    )
    rulebase: str | None = field(
        default=None,
        metadata={"help": "SPL builds: rule base YAML (default: the build's rulebase.yaml, else packaged)."},
    )
    sources: list[str] | None = field(
        default=None,
        metadata={
            "help": "Check provenance against the sources: tenet builds POOL=FILE, POOL=ORG/NAME@REVISION "
            "or a unified pair-rows file; SPL builds prompts=FILE candidates=FILE [verdicts=FILE].",
            "metavar": "SPEC",
        },
    )
    manifest: bool = field(
        default=True,
        metadata={
            "help": "Check every file against MANIFEST.sha256.",
            "negated_help": "Audit without MANIFEST.sha256 (then files outside the declared data are not "
            "checked; reported).",
        },
    )
    max_report: int = field(default=1000, metadata={"help": "List at most this many rows."})

    def __post_init__(self) -> None:
        if self.max_report < 0:
            raise SplHfError(f"--max_report must be >= 0, got {self.max_report}")


@dataclass
class TablesArgs:
    """What to tabulate"""

    path: str = field(metadata={"help": "Dataset folder or Hub repo id.", "positional": True})
    config_name: str = field(default="derivations", metadata={"help": "The dataset config to read."})
