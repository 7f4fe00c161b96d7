"""Reading pools: a file or Hub dataset read at the edge, then converted (:mod:`spl_hf.sources.convert`).

``read_pool``, ``read_prompt_pool`` and the plural forms; ``preview`` for a dry run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from datasets import concatenate_datasets

from spl_hf.errors import SplHfError
from spl_hf.sources.adapter import (
    PairAdapter,
    PromptAdapter,
    SourceOptions,
)
from spl_hf.sources.convert import (
    PoolResult,
    PoolsResult,
    PromptPoolResult,
    pairs_from_table,
    prompts_from_table,
    typed_dataset,
)
from spl_hf.sources.io import RawTable, SourceFileError, read_local, read_table
from spl_hf.sources.mapping import ColumnMap
from spl_hf.sources.registry import ADAPTERS, GENERIC, PROMPT_SOURCES, mapped, resolve_adapter
from spl_hf.sources.report import BuildReport, SourceReport
from spl_hf.sources.rows import (
    PAIR_FEATURES,
    PROMPT_FEATURES,
    QuarantineRecord,
)


def _options(options: SourceOptions | None, opts: Mapping[str, Any]) -> SourceOptions:
    if options is not None and opts:
        return replace(options, **opts)
    return options or SourceOptions(**opts)


def _read(adapter: PairAdapter | PromptAdapter, path_or_repo: str | Path, options: SourceOptions) -> RawTable:
    hub = replace(
        adapter.hub,
        split=options.split or adapter.hub.split,
        revision=options.revision or adapter.hub.revision,
    )
    try:
        return read_table(path_or_repo, hub)
    except FileNotFoundError as exc:
        raise FileNotFoundError(f"{adapter.name}: {exc}") from None
    except SplHfError as exc:  # includes a .json file that is not valid JSON
        raise SourceFileError(f"{adapter.name}: {exc}") from None


def _local_sha256(origin: str) -> str | None:
    """SHA-256 of the local file a pool was read from (so an audit can tell a different file first)."""
    from spl_hf.filehash import sha256_file

    return sha256_file(origin) if Path(origin).is_file() else None


def read_pool(
    source: str,
    path_or_repo: str | Path,
    options: SourceOptions | None = None,
    *,
    name: str | None = None,
    columns: ColumnMap | None = None,
    license: str | None = None,
    category: str | None = None,
    **opts: Any,
) -> PoolResult:
    """Read one pair pool from a local file of the source schema or from its Hub id.

    ``source`` is the adapter (a built-in pool or ``preference``); ``name`` the source name the rows
    get (default: the adapter's); ``columns`` maps what the adapter reads to the file's columns.
    """
    adapter = resolve_adapter(source, name, license, category)
    if not isinstance(adapter, PairAdapter):
        raise SourceFileError(f"{source!r} is a prompt source; use read_prompt_pool")
    resolved = _options(options, opts)
    table = mapped(adapter, _read(adapter, path_or_repo, resolved), columns or ())
    result = pairs_from_table(adapter, table, resolved)
    _describe(result.report, adapter, source, columns or ())
    return result


def read_prompt_pool(
    source: str,
    path_or_repo: str | Path,
    options: SourceOptions | None = None,
    *,
    name: str | None = None,
    columns: ColumnMap | None = None,
    license: str | None = None,
    category: str | None = None,
    **opts: Any,
) -> PromptPoolResult:
    adapter = resolve_adapter(source, name, license, category)
    if not isinstance(adapter, PromptAdapter):
        raise SourceFileError(f"{source!r} is a pair pool; use read_pool")
    resolved = _options(options, opts)
    table = mapped(adapter, _read(adapter, path_or_repo, resolved), columns or ())
    result = prompts_from_table(adapter, table, resolved)
    _describe(result.report, adapter, source, columns or ())
    return result


def _describe(
    report: SourceReport, adapter: PairAdapter | PromptAdapter, source: str, columns: ColumnMap
) -> None:
    """What the card's origins table states: the adapter, the mapping and the file's digest."""
    report.sha256 = _local_sha256(report.origin)
    report.adapter = source
    report.columns = dict(columns)
    report.category = adapter.category
    if source in GENERIC or adapter.name != source:  # the built-in pools' lines come from the registry
        report.description = adapter.description


def _ordered(paths: Mapping[str, str | Path], registry: Mapping[str, Any]) -> list[str]:
    unknown = sorted(set(paths) - set(registry))
    if unknown:
        raise SourceFileError(f"unknown source(s) {', '.join(unknown)}; known: {', '.join(registry)}")
    return [name for name in registry if name in paths]


def read_pools(
    paths: Mapping[str, str | Path], options: SourceOptions | None = None, **opts: Any
) -> PoolsResult:
    """Read several pair pools and concatenate them in registry order (independent of ``paths`` order)."""
    results = [read_pool(name, paths[name], options, **opts) for name in _ordered(paths, ADAPTERS)]
    rows = (
        concatenate_datasets([r.pairs for r in results])
        if results
        else typed_dataset({k: [] for k in PAIR_FEATURES}, PAIR_FEATURES)
    )
    quarantine = [q for r in results for q in r.quarantine]
    return PoolsResult(rows, quarantine, BuildReport([r.report for r in results]))


def read_prompt_pools(
    paths: Mapping[str, str | Path], options: SourceOptions | None = None, **opts: Any
) -> PoolsResult:
    results = [
        read_prompt_pool(name, paths[name], options, **opts) for name in _ordered(paths, PROMPT_SOURCES)
    ]
    rows = (
        concatenate_datasets([r.prompts for r in results])
        if results
        else typed_dataset({k: [] for k in PROMPT_FEATURES}, PROMPT_FEATURES)
    )
    quarantine = [q for r in results for q in r.quarantine]
    return PoolsResult(rows, quarantine, BuildReport([r.report for r in results]))


def preview(
    source: str,
    path: str | Path,
    options: SourceOptions | None = None,
    *,
    limit: int = 20,
    name: str | None = None,
    columns: ColumnMap | None = None,
    license: str | None = None,
    category: str | None = None,
) -> SourceReport:
    """Read the first ``limit`` records of a local file as the real read would (a release's dry run).

    Everything the real read refuses on these records is refused (a missing or unmapped column, a
    file that is no pool at all), and so is a head of which no record becomes a row: a file in another
    format than its adapter reads quarantines every record, which the real read would only count.
    """
    adapter = resolve_adapter(source, name, license, category)
    options = options or SourceOptions()
    try:
        raw = read_local(path, limit=limit)
    except SplHfError as exc:
        raise SourceFileError(f"{adapter.name}: {exc}") from None
    table = mapped(adapter, raw, columns or ())
    if isinstance(adapter, PairAdapter):
        result: PoolResult | PromptPoolResult = pairs_from_table(adapter, table, options)
    else:
        result = prompts_from_table(adapter, table, options)
    return require_rows(result.report, result.quarantine, f"the first {result.report.records_read}")


def require_rows(report: SourceReport, quarantine: list[QuarantineRecord], what: str = "") -> SourceReport:
    """Refuse a read of which no record became a row because every one was quarantined.

    Such a file is almost always in another format than its adapter reads (a TRL file given to the
    HH-RLHF adapter), or read through a wrong column mapping; a release would build on nothing from it.
    """
    if report.rows_yielded == 0 and quarantine:
        reasons = ", ".join(f"{k}: {n}" for k, n in sorted(report.quarantined.items()))
        first = quarantine[0]
        raise SourceFileError(
            f"{report.source}: {report.origin}: none of {what or 'its ' + str(report.records_read)} "
            f"record(s) becomes a row ({reasons}; first: {first.field or 'record'}: {first.detail}); is this "
            "the adapter (or column mapping) of this file?"
        )
    return report
