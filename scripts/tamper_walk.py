"""Edit every value leaf of the first row of every config of a release, one edit per copy, and audit each.

For each (config, column, leaf) the first row of the config's first data file gets one edit (a string
gets text appended, a bool flipped, a number moved, a list's first item edited), the folder's
MANIFEST.sha256 is recomputed (a consistent forger), and ``spl_hf.audit.audit`` runs in process.
Counts: edits the audit names (exit 1), edits it passes (undetected), and audits that crash.

    python scripts/tamper_walk.py out/demo/tenets_release/dataset out/demo/spl_recorded_release/dataset
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq


def _edit(value: Any) -> tuple[bool, Any]:
    if isinstance(value, bool):
        return True, not value
    if isinstance(value, int):
        return True, value + 1
    if isinstance(value, float):
        return True, value + 0.125
    if isinstance(value, str):
        return True, value + " (edited)"
    return False, value


def _leaves(value: Any, path: tuple = ()) -> list[tuple]:
    if isinstance(value, dict):
        return [leaf for k in value for leaf in _leaves(value[k], (*path, k))]
    if isinstance(value, list):
        return _leaves(value[0], (*path, 0)) if value else []
    return [path] if _edit(value)[0] else []


def _set(value: Any, path: tuple) -> Any:
    if not path:
        return _edit(value)[1]
    value[path[0]] = _set(value[path[0]], path[1:])
    return value


def _reseal(folder: Path) -> None:
    """The manifest of the folder as it is now (what a consistent forger writes)."""
    from spl_hf.filehash import sha256_file
    from spl_hf.manifest import MANIFEST, folder_files, write_manifest

    write_manifest(
        folder, {rel: sha256_file(folder / rel) for rel in folder_files(folder) if rel != MANIFEST}
    )


def walk(release: Path) -> dict[str, Any]:
    from spl_hf.audit import audit

    counts = {"edits": 0, "named": 0, "undetected": [], "crashed": []}
    files = [
        sorted(d.glob("*.parquet"))[0]
        for d in sorted(release.iterdir())
        if d.is_dir() and any(d.glob("*.parquet"))
    ]
    for file in files:
        table = pq.read_table(file)
        if not table.num_rows:
            continue
        first = table.slice(0, 1).to_pylist()[0]
        for column in table.column_names:
            for leaf in (
                [(column,)] if not _leaves(first[column]) else [(column, *p) for p in _leaves(first[column])]
            ):
                if len(leaf) == 1 and not _edit(first[column])[0]:
                    continue  # a null top-level value: nothing to edit in place
                with tempfile.TemporaryDirectory() as tmp:
                    copy = Path(tmp) / "ds"
                    shutil.copytree(release, copy)
                    rows = table.to_pylist()
                    rows[0] = {
                        **rows[0],
                        column: _set(rows[0][column], leaf[1:])
                        if len(leaf) > 1
                        else _edit(rows[0][column])[1],
                    }
                    target = copy / file.relative_to(release)
                    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), target)
                    _reseal(copy)
                    name = f"{file.relative_to(release)}:{'.'.join(map(str, leaf))}"
                    counts["edits"] += 1
                    try:
                        report = audit(copy)
                    except Exception as exc:
                        counts["crashed"].append(f"{name}: {type(exc).__name__}: {exc}"[:300])
                        traceback.print_exc(limit=3)
                        continue
                    if report.ok:
                        counts["undetected"].append(name)
                    else:
                        counts["named"] += 1
    return counts


def main(argv: list[str]) -> int:
    bad = 0
    for release in map(Path, argv):
        c = walk(release)
        print(
            f"{release}: {c['edits']} edits, {c['named']} named by the audit, {len(c['undetected'])} undetected, "
            f"{len(c['crashed'])} crashed"
        )
        for line in c["undetected"]:
            print(f"  undetected: {line}")
        for line in c["crashed"]:
            print(f"  crashed: {line}")
        bad += len(c["undetected"]) + len(c["crashed"])
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
