"""A build's recorded decontamination, rechecked: no released row may carry a removed prompt."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from spl_hf.contract import DECONTAMINATION_FILE, read_decontamination


def _prompt_ids(table: pa.Table) -> pa.Array | None:
    if "prompt_id" in table.column_names:
        return table.column("prompt_id").combine_chunks()
    if "derivation" in table.column_names:
        der = table.column("derivation").combine_chunks()
        if "prompt_id" in [f.name for f in der.type]:
            return pc.struct_field(der, "prompt_id")
    return None


def check_decontamination(folder: Path, splits: Sequence) -> list[str]:
    """Failures: an unreadable record, or released rows whose prompt the build recorded as removed."""
    path = Path(folder) / DECONTAMINATION_FILE
    if not path.is_file():
        return []
    try:
        removed = read_decontamination(path).removed_ids
    except ValueError as exc:
        return [str(exc)]
    failures = []
    if not removed:
        return failures
    wanted = pa.array(sorted(removed), pa.string())
    for s in splits:
        ids = _prompt_ids(s.table)
        if ids is None:
            continue
        hit = pc.is_in(ids, value_set=wanted).fill_null(False)
        if pc.any(hit).as_py():
            rows = [int(i) for i in pc.indices_nonzero(hit).to_pylist()[:5]]
            failures.append(
                f"{s.config}/{s.split}: rows {rows} carry prompts that {DECONTAMINATION_FILE} records "
                "as removed (held-out evaluation prompts)"
            )
    return failures
