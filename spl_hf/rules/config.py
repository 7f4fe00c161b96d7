"""Settings of ``spl-hf rules check|show`` (no heavy import: the CLI reads them for ``--help``)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class RulesArgs:
    """Rule base"""

    rulebase: str | None = field(
        default=None, metadata={"help": "Rule base YAML (default: the packaged rule base)."}
    )
