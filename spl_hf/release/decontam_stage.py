"""The decontamination stage of both releases: held-out prompt sets read through the source adapters.

Held-out sets are read whole: a source's training-time filter (HarmBench's standard behaviours)
would leave evaluation prompts uncompared, so only ``DecontamConfig.heldout_harmbench_categories``
narrows them, and the record says how many prompts each set contributed. The record also carries
what every source file of the build read (records, rows, filtered, quarantined, partial, sha256),
so the build report and the card show it and an audit can tell a different file first.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa

from spl_hf.contract import DECONTAMINATION_FILE
from spl_hf.errors import SplHfError
from spl_hf.files import write_json, write_parquet
from spl_hf.release.pools import SourceSpec

SOURCE_REPORTS_FILE = "source_reports.json"  # written by the read/prompts stage beside its rows


def check_heldout(config: Any, specs: list[SourceSpec]) -> None:
    """Every held-out set the config names has a file, and every file a set (checked before any work)."""
    names = list(config.heldout)
    given = {s.source: s for s in specs}
    missing = [n for n in names if n not in given]
    if missing:
        raise SplHfError(
            f"held-out sets {missing} have no file: give heldout_files entries such as "
            f"'{missing[0]}=path' (or 'org/name@sha'), or leave them out of 'heldout'"
        )
    unused = sorted(set(given) - set(names))
    if unused:
        raise SplHfError(f"heldout_files names {unused}, which 'heldout' does not list")


def heldout_table(
    specs: list[SourceSpec], names: list[str], config: Any = None
) -> tuple[pa.Table, list[dict[str, Any]]]:
    """Prompt rows of every held-out set the config names, read whole, and each set's read report."""
    from spl_hf.sources import SourceOptions, read_prompt_pool

    categories = tuple(
        getattr(config, "heldout_harmbench_categories", ("standard", "contextual", "copyright"))
    )
    given = {s.source: s for s in specs}
    tables, reports = [], []
    for n in names:
        options = SourceOptions(revision=given[n].revision, harmbench_categories=categories)
        result = read_prompt_pool(given[n].reader, given[n].location, options, **given[n].read_kwargs())
        tables.append(result.prompts.data.table)
        reports.append({**result.report.to_dict(), "role": "heldout"})
    return pa.concat_tables(tables), reports


def public_report(report: dict[str, Any]) -> dict[str, Any]:
    """A read report as the card and build report show it: a local file by its name, not its path."""
    origin = str(report.get("origin", ""))
    return {**report, "origin": origin if origin.startswith("hf://") else Path(origin).name}


def write_source_reports(out: Path, reports: list[dict[str, Any]]) -> None:
    write_json(out / SOURCE_REPORTS_FILE, reports, indent=1, sort_keys=True, ascii_only=True)


def read_source_reports(folder: Path) -> list[dict[str, Any]]:
    """The source read reports a read stage wrote (none for a stage written before they existed)."""
    path = folder / SOURCE_REPORTS_FILE
    return json.loads(path.read_text("utf-8")) if path.is_file() else []


def decontaminate_rows(
    rows: pa.Table,
    specs: list[SourceSpec],
    config: Any,
    out: Path,
    log: Callable[[str], None],
    sources: list[dict[str, Any]] | None = None,
    draw: Callable[[pa.Table], tuple[pa.Table, dict[str, Any]]] | None = None,
) -> tuple[pa.Table, dict[str, Any]]:
    """Remove rows whose prompt matches a held-out prompt; the removed ids go to ``removed.parquet``.

    ``draw`` (the SPL release's per-source sample) runs on the kept rows, so a sample is never
    drawn from prompts that are then removed. Nothing left is an error naming the cause, raised
    before any model is loaded.
    """
    from spl_hf.decontam import decontaminate

    held, held_reports = heldout_table(specs, list(config.heldout), config)
    result = decontaminate(rows, held, config, progress=True)
    summary = result.summary()
    summary["sources"] = [public_report(r) for r in [*(sources or []), *held_reports]]
    kept = result.kept
    if kept.num_rows == 0 and rows.num_rows:
        raise SplHfError(
            f"decontamination removed all {rows.num_rows} training rows ({summary['prompts_removed']} prompts): "
            f"every one matches a held-out prompt of {', '.join(config.heldout)} "
            f"({summary['removed_by_match']}); nothing is left to build from"
        )
    if draw is not None:
        kept, drawn = draw(kept)
        summary.update(drawn)
    write_parquet(out / "removed.parquet", result.removed)
    record = {"summary": summary, "removed": result.removed.to_pylist()}
    write_json(out / DECONTAMINATION_FILE, record, indent=1, sort_keys=True, ascii_only=True)
    log(
        f"  removed {summary['rows_removed']} of {summary['rows_in']} rows ({summary['prompts_removed']} prompts) "
        f"matching {', '.join(config.heldout)} ({summary['heldout_prompts']} prompts): {summary['removed_by_source']}"
    )
    return kept, summary
