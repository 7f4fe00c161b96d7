"""Example rows for a card: the first two rows of each kind of config, texts clipped, as the Hub's
viewer would show them (the per-tenet and per-source configs repeat rows of ``all`` and are skipped)."""

from __future__ import annotations

import json

import pyarrow as pa

from spl_hf.dataset.folder import ConfigData

# The configs whose rows a reader needs to see once each, in card order.
EXAMPLE_CONFIGS = ("all", "sft", "judge_scores", "preferences", "derivations", "judge_derivations")
EXAMPLE_ROWS = 2
EXAMPLE_CHARS = 160


def _clip(value: object) -> object:
    if isinstance(value, str):
        return value if len(value) <= EXAMPLE_CHARS else value[: EXAMPLE_CHARS - 1] + "…"
    if isinstance(value, list):
        return [_clip(v) for v in value]
    if isinstance(value, dict):
        return {k: _clip(v) for k, v in value.items()}
    return value


def _first_rows(config: ConfigData, configs: list[ConfigData]) -> list[dict]:
    """The first rows of the config's first split (a union split reads the splits it covers)."""
    tables: list[pa.Table] = []
    if config.splits:
        tables.append(next(iter(config.splits.values())))
    elif config.unions:
        by_name = {c.name: c for c in configs}
        for cfg, split in next(iter(config.unions.values())):
            tables.append(by_name[cfg].splits[split])
    rows: list[dict] = []
    for table in tables:
        rows += table.slice(0, EXAMPLE_ROWS - len(rows)).to_pylist()
        if len(rows) >= EXAMPLE_ROWS:
            break
    return rows


def card_examples(configs: list[ConfigData]) -> dict[str, str]:
    """Config name -> its first two rows as JSON Lines (strings clipped), for the card."""
    out = {}
    for config in configs:
        if config.name not in EXAMPLE_CONFIGS:
            continue
        rows = _first_rows(config, configs)
        if rows:
            out[config.name] = "\n".join(json.dumps(_clip(r), ensure_ascii=False, default=str) for r in rows)
    return out
