"""The adapters by name, and an adapter under the source name the user chose, with its column mapping."""

from __future__ import annotations

from dataclasses import replace

from spl_hf.sources.adapter import PairAdapter, PromptAdapter
from spl_hf.sources.adapters import PAIR_ADAPTERS, PROMPT_ADAPTERS
from spl_hf.sources.adapters.preference import PREFERENCE
from spl_hf.sources.adapters.preference import READS as PREFERENCE_READS
from spl_hf.sources.adapters.prompts import PROMPTS
from spl_hf.sources.io import RawTable, SourceFileError
from spl_hf.sources.mapping import ColumnMap, MappingError, apply_columns, check_source_name
from spl_hf.sources.rows import DECLARED_CATEGORIES

ADAPTERS: dict[str, PairAdapter] = {a.name: a for a in PAIR_ADAPTERS}
PROMPT_SOURCES: dict[str, PromptAdapter] = {a.name: a for a in PROMPT_ADAPTERS}
# Adapters of files in a general format; the rows take the source name the user gives.
GENERIC: dict[str, PairAdapter | PromptAdapter] = {PREFERENCE.name: PREFERENCE, PROMPTS.name: PROMPTS}


def known_adapters(kind: str) -> list[str]:
    """Every adapter that reads sources of ``kind`` ("pairs" or "prompts"), the generic one included."""
    registry = ADAPTERS if kind == "pairs" else PROMPT_SOURCES
    return [*registry, *(n for n, a in GENERIC.items() if a.kind == kind)]


def check_category(category: str | None, what: str = "category") -> str | None:
    """A declared category in its stored spelling ('over-refusal-prone' is 'over_refusal_prone')."""
    if category is None:
        return None
    value = str(category).strip().lower().replace("-", "_")
    if value not in DECLARED_CATEGORIES:
        shown = ", ".join(c.replace("_", "-") for c in DECLARED_CATEGORIES)
        raise MappingError(f"{what}: {category!r} is not a category; one of {shown}")
    return value


def _lookup(source: str) -> PairAdapter | PromptAdapter:
    adapter = ADAPTERS.get(source) or PROMPT_SOURCES.get(source) or GENERIC.get(source)
    if adapter is None:
        known = ", ".join([*ADAPTERS, *PROMPT_SOURCES, *GENERIC])
        raise SourceFileError(f"unknown source {source!r}; known sources: {known}")
    return adapter


def resolve_adapter(
    source: str, name: str | None = None, license: str | None = None, category: str | None = None
) -> PairAdapter | PromptAdapter:
    """The adapter ``source`` under the source name the user chose (rows, splits and the card use it).

    ``preference`` and ``prompts`` are the generic adapters of any preference or prompt file; the
    built-in adapters can be renamed too (HH-RLHF's test split read as ``hh_test``, not as
    ``hh_train``). ``category`` is what the user declares the source's prompts to be; a renamed or
    generic source without one is "unknown" (a built-in adapter's own categories describe its own
    dataset, not the user's file).
    """
    adapter = _lookup(source)
    declared = check_category(category)
    if declared is not None or source in GENERIC or (name and name != adapter.name):
        adapter = replace(adapter, category=declared or "unknown")
    if name and name != adapter.name:
        check_source_name(name, [*ADAPTERS, *PROMPT_SOURCES, *GENERIC])
        # The adapter's line names its own pool and split ("HH-RLHF harmless-base train: ..."); a
        # renamed read keeps only what the adapter takes, and says which layout it read.
        taken = adapter.description.split(": ", 1)[-1]
        what = f"read by the {source} adapter ({adapter.hub.repo} layout) as source {name!r}: {taken}"
        adapter = replace(
            adapter, name=name, description=what if source not in GENERIC else adapter.description
        )
    if license:
        adapter = replace(adapter, license=license)
    return adapter


def mapped(adapter: PairAdapter | PromptAdapter, table: RawTable, columns: ColumnMap) -> RawTable:
    reads = PREFERENCE_READS if adapter.convert is PREFERENCE.convert else _any_name(columns)
    return apply_columns(table, columns, reads, adapter.name)


def _any_name(columns: ColumnMap) -> tuple[str, ...]:
    """A built-in adapter may read optional columns besides its schemas: any target name is allowed."""
    return tuple(name for name, _ in columns)
