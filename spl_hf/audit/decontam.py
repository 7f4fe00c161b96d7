"""A build's recorded decontamination, rechecked: no released row may carry a removed prompt."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from spl_hf.contract import DECONTAMINATION_FILE, read_decontamination


def _prompt_ids(table: pa.Table) -> pa.ChunkedArray | None:
    # Chunk by chunk: combining a many-file split's derivations first copied them all (at the card,
    # about 1 GB at the audit's peak) for one field.
    if "prompt_id" in table.column_names:
        return table.column("prompt_id")
    if "derivation" in table.column_names:
        kind = table.schema.field("derivation").type
        if pa.types.is_struct(kind) and kind.get_field_index("prompt_id") >= 0:
            return pc.struct_field(table.column("derivation"), "prompt_id")
    return None


def _hits(ids: pa.ChunkedArray, wanted: pa.Array) -> pa.Array:
    """Whether each id is one of ``wanted`` (null: no). A dictionary chunk is tested on its values
    and mapped through its indices: ``is_in`` on the chunk itself decodes it first (the judge scores'
    16.4M prompt ids at the card: 1 GB)."""
    parts = [
        pc.is_in(c.dictionary, value_set=wanted).take(c.indices)
        if pa.types.is_dictionary(c.type)
        else pc.is_in(c, value_set=wanted)
        for c in ids.chunks
    ]
    return pa.chunked_array(parts, pa.bool_()).combine_chunks().fill_null(False)


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
        hit = _hits(ids, wanted)
        if pc.any(hit).as_py():
            rows = [int(i) for i in pc.indices_nonzero(hit).to_pylist()[:5]]
            failures.append(
                f"{s.config}/{s.split}: rows {rows} carry prompts that {DECONTAMINATION_FILE} records "
                "as removed (held-out evaluation prompts)"
            )
    return failures
