"""What an adapter is: a Hub location, a licence, the columns it needs and a pure record converter."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from spl_hf.sources.io import HubSpec, UnparsableRecord
from spl_hf.sources.options import SourceOptions
from spl_hf.sources.rows import Issue, PairDraft, PromptDraft

Record = Mapping[str, Any]


@dataclass(frozen=True)
class Converted:
    """What one record (or record group) became."""

    pairs: tuple[PairDraft, ...] = ()
    issues: tuple[Issue, ...] = ()
    skipped: str | None = None  # the record is valid but outside this pool (e.g. another language)


@dataclass(frozen=True)
class Filtered:
    """A prompt record that is valid but outside this pool (e.g. a HarmBench category left out)."""

    reason: str


# What a pair adapter's quick reader gives for a record in its regular shape: prompt text, response a,
# response b, source preference, the four safety columns and the prompt's turns (None: the prompt
# text is the one user turn). See ``PairAdapter.quick``.
QuickPair = tuple[str, str, str, str, tuple[Any, Any, Any, Any], tuple[tuple[str, str], ...] | None]

Item = Record | Issue | UnparsableRecord
GroupFn = Callable[[Sequence[Record | UnparsableRecord]], Iterator[tuple[int, Item]]]


def one_per_record(records: Sequence[Record | UnparsableRecord]) -> Iterator[tuple[int, Item]]:
    yield from enumerate(records)


@dataclass(frozen=True)
class PairAdapter:
    name: str
    hub: HubSpec
    license: str
    description: str
    schemas: tuple[tuple[str, ...], ...]  # the file must hold every column of at least one
    convert: Callable[[Record, SourceOptions], Converted]
    group: GroupFn = one_per_record  # how records become items (HelpSteer2 pairs consecutive rows)
    kind: str = "pairs"
    # The converter's result for a record in the regular shape, read without building the issue
    # machinery: the one pair ``convert`` would give (before the pool's text checks), or None, and
    # then ``convert`` decides. Only for one-record-per-item adapters; a pool built with or without it
    # is the same, which the tests check record by record.
    quick: Callable[[Record, SourceOptions], QuickPair | None] | None = None
    category: str | None = None  # declared for the source (a recipe's category); None: the adapter's own


@dataclass(frozen=True)
class PromptAdapter:
    name: str
    hub: HubSpec
    license: str
    description: str
    schemas: tuple[tuple[str, ...], ...]
    convert: Callable[[Record, SourceOptions], PromptDraft | Filtered]
    kind: str = "prompts"
    # Declared for the source (a recipe's category): every row's category; None: each row's from convert.
    category: str | None = None


def missing_columns(schemas: Iterable[tuple[str, ...]], columns: Iterable[str]) -> tuple[str, ...]:
    """The columns still needed by the closest schema; empty when one schema is satisfied."""
    have = set(columns)
    best: tuple[str, ...] | None = None
    for schema in schemas:
        lacking = tuple(c for c in schema if c not in have)
        if not lacking:
            return ()
        if best is None or len(lacking) < len(best):
            best = lacking
    return best or ()
