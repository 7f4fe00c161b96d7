"""Settings of ``spl-hf agreement`` (no heavy import: the CLI reads them for ``--help``)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class AgreementArgs:
    """Labels to compare"""

    panel: str = field(
        metadata={"help": "Rater labels (.jsonl/.parquet): item_id, rater_id, attribute, label."}
    )
    labels: str = field(
        metadata={"help": "Model labels (.jsonl/.parquet): item_id, attribute, label (null = parse failure)."}
    )
    schema: str | None = field(
        default=None, metadata={"help": "Attribute schema YAML (default: the built-in SPL schema)."}
    )
