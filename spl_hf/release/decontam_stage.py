"""The decontamination stage of both releases: held-out prompt sets read through the source adapters."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from spl_hf.contract.decontamination import DECONTAMINATION_FILE
from spl_hf.release.pools import SourceSpec


def check_heldout(config: Any, specs: list[SourceSpec]) -> None:
    """Every held-out set the config names has a file, and every file a set (checked before any work)."""
    names = list(config.heldout)
    given = {s.source: s for s in specs}
    missing = [n for n in names if n not in given]
    if missing:
        raise ValueError(
            f"held-out sets {missing} have no file: give heldout_files entries such as "
            f"'{missing[0]}=path' (or 'org/name@sha'), or leave them out of 'heldout'"
        )
    unused = sorted(set(given) - set(names))
    if unused:
        raise ValueError(f"heldout_files names {unused}, which 'heldout' does not list")


def heldout_table(specs: list[SourceSpec], names: list[str]) -> pa.Table:
    """Prompt rows of every held-out set the config names."""
    from spl_hf.sources import SourceOptions, read_prompt_pool

    given = {s.source: s for s in specs}
    tables = [
        read_prompt_pool(n, given[n].location, SourceOptions(revision=given[n].revision)).prompts.data.table
        for n in names
    ]
    return pa.concat_tables(tables)


def decontaminate_rows(
    rows: pa.Table, specs: list[SourceSpec], config: Any, out: Path, log: Callable[[str], None]
) -> tuple[pa.Table, dict[str, Any]]:
    """Remove rows whose prompt matches a held-out prompt; the removed ids go to ``removed.parquet``."""
    from spl_hf.decontam import decontaminate

    result = decontaminate(rows, heldout_table(specs, list(config.heldout)), config, progress=True)
    pq.write_table(result.removed, out / "removed.parquet")
    summary = result.summary()
    record = {"summary": summary, "removed": result.removed.to_pylist()}
    (out / DECONTAMINATION_FILE).write_text(
        json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8"
    )
    log(
        f"  removed {summary['rows_removed']} of {summary['rows_in']} rows ({summary['prompts_removed']} prompts) "
        f"matching {', '.join(config.heldout)}: {summary['removed_by_source']}"
    )
    return result.kept, summary
