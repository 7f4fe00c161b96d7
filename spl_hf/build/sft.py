"""The companion SFT config of a per-tenet release: each row's conversation ending in its chosen reply.

Same rows in the same order as the ``all`` config (per tenet, then per source), so an SFT run and a
DPO run on one release see the same prompts; ``scenario_id`` ties each SFT row to its DPO row.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
from datasets import Features, Value

from spl_hf.derive.features import MESSAGES
from spl_hf.hub.folder import ConfigData

SFT_CONFIG = "sft"
SFT_FEATURES = Features(
    {"scenario_id": Value("string"), "tenet": Value("string"), "source": Value("string"), "messages": MESSAGES}
)


def sft_rows(rows: pa.Table) -> pa.Table:
    """``messages`` = prompt + chosen for every DPO row."""
    messages = [p + c for p, c in zip(rows.column("prompt").to_pylist(), rows.column("chosen").to_pylist())]
    return pa.table(
        {
            "scenario_id": rows.column("scenario_id"),
            "tenet": rows.column("tenet"),
            "source": rows.column("source"),
            "messages": pa.array(messages, SFT_FEATURES["messages"].pa_type),
        }
    ).cast(SFT_FEATURES.arrow_schema)


def sft_config(per_tenet: Sequence[ConfigData]) -> ConfigData:
    """One ``train`` split holding the rows of every per-tenet split, in the order ``all`` lists them."""
    parts = [sft_rows(c.splits[s]) for c in per_tenet for s in c.splits]
    table = pa.concat_tables(parts) if parts else SFT_FEATURES.arrow_schema.empty_table()
    return ConfigData(SFT_CONFIG, SFT_FEATURES, {"train": table})
