"""What an adapter is: a Hub location, a licence, the columns it needs and a pure record converter."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from spl_hf.sources.io import HubSpec, UnparsableRecord
from spl_hf.sources.rows import Issue, PairDraft, PromptDraft
from spl_hf.sources.transcript import DEFAULT_CLIP_CHARS

Record = Mapping[str, Any]


@dataclass(frozen=True)
class SourceOptions:
    """Options shared by the adapters (an adapter ignores those that do not concern it)."""

    clip_chars: int | None = field(
        default=DEFAULT_CLIP_CHARS,
        metadata={
            "help": "character budget for flattened multi-turn histories (ca_en_mt_p1, wf_mt, HelpSteer2 "
            "multi-turn prompts); earlier exchanges beyond it are dropped whole. None disables clipping."
        },
    )
    pku_preference: Literal["safer", "better"] = field(
        default="safer",
        metadata={
            "help": "PKU-SafeRLHF label used as source_preference: safer_response_id or better_response_id"
        },
    )
    seed: int = field(
        default=42,
        metadata={"help": "seed of the deterministic representative-pair draw (ca_en_mt_p1)"},
    )
    max_text_chars: int | None = field(
        default=200_000,
        metadata={
            "help": "longest prompt or response text kept (characters); longer ones are quarantined as "
            "text_too_long (far beyond any judge context, usually a broken export). None: no limit."
        },
    )
    pku_drop_both_unsafe: bool = field(
        default=False,
        metadata={
            "help": "PKU-SafeRLHF: leave out (count as filtered, both_unsafe) pairs whose two responses "
            "are both labelled unsafe; such pairs then need both is_response_*_safe flags."
        },
    )
    harmbench_categories: tuple[str, ...] = field(
        default=("standard",),
        metadata={
            "help": "HarmBench official CSV: FunctionalCategory values kept (standard, contextual, copyright); "
            "others are counted as filtered. The default matches the Hub config the adapter names "
            "(walledai/HarmBench standard, 200 behaviours)."
        },
    )
    accept_partial: bool = field(
        default=False,
        metadata={
            "help": "keep the readable part of a file that breaks off (a truncated .gz, an unclosed JSON "
            "list); the tail is quarantined as truncated_file and the report marks the source partial. "
            "Off: such a file is an error naming it, since an unknown part of it is lost."
        },
    )
    progress: bool = field(default=False, metadata={"help": "show a progress bar over the records"})
    split: str | None = field(default=None, metadata={"help": "Hub split to read instead of the adapter's"})
    revision: str | None = field(default=None, metadata={"help": "Hub revision (commit sha) to pin"})

    def __post_init__(self) -> None:
        if self.clip_chars is not None and (isinstance(self.clip_chars, bool) or self.clip_chars <= 0):
            raise ValueError(
                f"clip_chars must be a positive number of characters or None, got {self.clip_chars!r}"
            )
        if self.max_text_chars is not None and (
            isinstance(self.max_text_chars, bool) or self.max_text_chars <= 0
        ):
            raise ValueError(f"max_text_chars must be a positive number or None, got {self.max_text_chars!r}")
        known = {"standard", "contextual", "copyright"}
        if (
            isinstance(self.harmbench_categories, str)
            or not self.harmbench_categories
            or not set(self.harmbench_categories) <= known
        ):
            raise ValueError(
                f"harmbench_categories must be a non-empty subset of {sorted(known)}, got {self.harmbench_categories!r}"
            )
        if self.pku_preference not in ("safer", "better"):
            raise ValueError(f"pku_preference must be 'safer' or 'better', got {self.pku_preference!r}")


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


@dataclass(frozen=True)
class PromptAdapter:
    name: str
    hub: HubSpec
    license: str
    description: str
    schemas: tuple[tuple[str, ...], ...]
    convert: Callable[[Record, SourceOptions], PromptDraft | Filtered]
    kind: str = "prompts"


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
