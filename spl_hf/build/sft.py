"""The companion SFT config of a per-tenet release: each row's conversation ending in its chosen reply.

Same rows in the same order as the ``all`` config (per tenet, then per source), so an SFT run and a
DPO run on one release see the same prompts; ``scenario_id`` ties each SFT row to its DPO row.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
from datasets import Features, Value

from spl_hf.contract import MESSAGES
from spl_hf.dataset import ConfigData

SFT_CONFIG = "sft"
SFT_FEATURES = Features(
    {
        # large_string like config `all` (and the v3 card), so the two concatenate without a cast
        "scenario_id": Value("large_string"),
        "tenet": Value("large_string"),
        "source": Value("large_string"),
        "messages": MESSAGES,
    }
)


def sft_rows(rows: pa.Table) -> pa.Table:
    """``messages`` = prompt + chosen for every DPO row."""
    prompt, chosen = (rows.column(c).combine_chunks() for c in ("prompt", "chosen"))
    messages_type = SFT_FEATURES.arrow_schema.field("messages").type
    if prompt.null_count or chosen.null_count or prompt.type != messages_type or chosen.type != messages_type:
        # The per-row definition, which also fails as it does on a missing list.
        messages = pa.array(
            [p + c for p, c in zip(prompt.to_pylist(), chosen.to_pylist())], SFT_FEATURES["messages"].pa_type
        )
    else:
        messages = concat_lists(prompt, chosen)
    return pa.table(
        {
            "scenario_id": rows.column("scenario_id"),
            "tenet": rows.column("tenet"),
            "source": rows.column("source"),
            "messages": messages,
        }
    ).cast(SFT_FEATURES.arrow_schema)


def concat_lists(first: pa.ListArray, second: pa.ListArray) -> pa.ListArray:
    """Row-wise ``first[i] + second[i]`` of two list arrays without nulls, by one gather of their items.

    The Python way (``to_pylist``, ``+``, ``pa.array``) builds a dict per message: seconds at card size.
    """
    a_off, b_off = (np.asarray(x.offsets.to_numpy(), dtype=np.int64) for x in (first, second))
    a_len, b_len = np.diff(a_off), np.diff(b_off)
    a_start, b_start = a_off[:-1] - a_off[0], b_off[:-1] - b_off[0]  # row starts among the rows' items
    # The rows' items only (``values`` also holds those of rows sliced away), first's then second's.
    items = pa.concat_arrays(
        [
            first.values.slice(int(a_off[0]), int(a_off[-1] - a_off[0])),
            second.values.slice(int(b_off[0]), int(b_off[-1] - b_off[0])),
        ]
    )
    offsets = np.zeros(len(first) + 1, dtype=np.int64)
    np.cumsum(a_len + b_len, out=offsets[1:])
    row = np.repeat(np.arange(len(first)), a_len + b_len)  # the output row of each output item
    k = np.arange(offsets[-1]) - offsets[row]  # its position within that row
    from_first = a_start[row] + k
    from_second = (a_off[-1] - a_off[0]) + b_start[row] + (k - a_len[row])
    take = np.where(k < a_len[row], from_first, from_second)
    return pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)), items.take(pa.array(take)))


def sft_config(per_tenet: Sequence[ConfigData]) -> ConfigData:
    """One ``train`` split holding the rows of every per-tenet split, in the order ``all`` lists them."""
    parts = [sft_rows(c.splits[s]) for c in per_tenet for s in c.splits]
    table = pa.concat_tables(parts) if parts else SFT_FEATURES.arrow_schema.empty_table()
    return ConfigData(SFT_CONFIG, SFT_FEATURES, {"train": table})
