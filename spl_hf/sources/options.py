"""Options of the source adapters, and what ``spl-hf sources read`` adds (no heavy import: ``--help`` reads them).

:class:`SourceOptions` is the one declaration of how a source is read. ``sources read`` and both
releases compose it as one of their config classes (its fields are their flags and recipe keys), so
a value means the same everywhere: ``clip_chars: 0`` is "no clipping" in ``sources read``, ``release
tenets`` and ``release spl`` alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Literal

from spl_hf.errors import SplHfError
from spl_hf.sources.transcript import DEFAULT_CLIP_CHARS

# A field the program sets for each read (from a pool's '@sha', a command's own flag), not a setting:
# no flag, no recipe key (spl_hf.configs skips it).
PER_READ: dict[str, Any] = {"setting": False}
HARMBENCH_CATEGORY = Literal["standard", "contextual", "copyright"]


def _limit(value: Any, name: str, what: str) -> int | None:
    """A positive limit, or None for none; 0 means none too (one meaning on every command line and recipe)."""
    if value is None or (value == 0 and not isinstance(value, bool)):
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise SplHfError(f"{name} must be a whole number >= 0 (0 or None: {what}), got {value!r}")
    return value


@dataclass(frozen=True)
class SourceOptions:
    """Reading sources (every adapter takes these; one ignores those that do not concern it)"""

    clip_chars: int | None = field(
        default=DEFAULT_CLIP_CHARS,
        metadata={
            "help": "Character budget for flattened multi-turn histories (ca_en_mt_p1, wf_mt, HelpSteer2 "
            "multi-turn prompts); earlier exchanges beyond it are dropped whole. 0 (None in Python): no clipping."
        },
    )
    pku_preference: Literal["safer", "better"] = field(
        default="safer",
        metadata={
            "help": "PKU-SafeRLHF label used as source_preference: safer_response_id or better_response_id."
        },
    )
    pair_seed: int = field(
        default=42,
        metadata={"help": "Seed of the deterministic representative-pair draw (ca_en_mt_p1)."},
    )
    max_text_chars: int | None = field(
        default=200_000,
        metadata={
            "help": "Longest prompt or response text kept (characters); longer ones are quarantined as "
            "text_too_long (far beyond any judge context, usually a broken export). 0 (None in Python): no limit."
        },
    )
    pku_drop_both_unsafe: bool = field(
        default=False,
        metadata={
            "help": "PKU-SafeRLHF: leave out (count as filtered, both_unsafe) pairs whose two responses "
            "are both labelled unsafe; such pairs then need both is_response_*_safe flags."
        },
    )
    harmbench_categories: tuple[HARMBENCH_CATEGORY, ...] = field(
        default=("standard",),
        metadata={
            "help": "HarmBench official CSV: FunctionalCategory values kept (several may be given); others "
            "are counted as filtered. The default matches the Hub config the adapter names "
            "(walledai/HarmBench standard, 200 behaviours)."
        },
    )
    accept_partial: bool = field(
        default=False,
        metadata={
            "help": "Keep the readable part of a file that breaks off (a truncated .gz, an unclosed JSON "
            "list); the tail is quarantined as truncated_file and the report and card mark the source "
            "partial. Off: such a file is an error naming it, since an unknown part of it is lost."
        },
    )
    progress: bool = field(default=False, metadata=PER_READ)  # a progress bar over the records
    split: str | None = field(default=None, metadata=PER_READ)  # Hub split to read instead of the adapter's
    revision: str | None = field(default=None, metadata=PER_READ)  # Hub revision (commit sha) to pin

    def __post_init__(self) -> None:
        # frozen: the normalised limits are set through object.__setattr__ (0 -> None, one meaning)
        object.__setattr__(self, "clip_chars", _limit(self.clip_chars, "clip_chars", "no clipping"))
        object.__setattr__(self, "max_text_chars", _limit(self.max_text_chars, "max_text_chars", "no limit"))
        known = {"standard", "contextual", "copyright"}
        categories = self.harmbench_categories
        if isinstance(categories, list):  # a recipe's YAML list
            categories = tuple(categories)
            object.__setattr__(self, "harmbench_categories", categories)
        if isinstance(categories, str) or not categories or not set(categories) <= known:
            raise SplHfError(
                f"harmbench_categories must be a non-empty subset of {sorted(known)}, got {categories!r}"
            )
        object.__setattr__(self, "harmbench_categories", tuple(dict.fromkeys(categories)))
        if self.pku_preference not in ("safer", "better"):
            raise SplHfError(f"pku_preference must be 'safer' or 'better', got {self.pku_preference!r}")

    def settings(self) -> dict[str, Any]:
        """The settings that differ from the defaults (what a stage key records; per-read fields left out)."""
        base = SourceOptions()
        return {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if f.metadata.get("setting", True) and getattr(self, f.name) != getattr(base, f.name)
        }


@dataclass
class SourcesReadArgs:
    """What to read"""

    source: str = field(
        metadata={
            "help": "Adapter name (see `spl-hf sources list`); 'preference' reads any preference file (TRL's "
            "prompt/chosen/rejected formats, or other columns through --columns), 'prompts' any file of prompts."
        }
    )
    path: str = field(
        metadata={
            "help": "Local .jsonl/.json/.csv/.parquet/.txt (optionally .gz) file, or a Hub dataset id (network access)."
        }
    )
    source_name: str | None = field(
        default=None,
        metadata={
            "help": "Name of the source in the rows (source, pair_id), reports and cards, e.g. hh_test "
            "(default: the adapter's name)."
        },
    )
    columns: list[str] = field(
        default_factory=list,
        metadata={
            "help": "Column mapping as 'name=column' entries, e.g. prompt=question chosen=response_j "
            "rejected=response_k: the file's column read as what the adapter calls name."
        },
    )
    license: str | None = field(
        default=None,
        metadata={"help": "Licence of the file, stated in reports and cards (default: the adapter's)."},
    )
    category: Literal["benign", "over_refusal_prone", "harmful", "mixed"] | None = field(
        default=None,
        metadata={
            "help": "What the source's prompts are, stated in its rows (category), reports and cards (default: "
            "the adapter's own for a built-in source under its name; unknown for a renamed or generic one)."
        },
    )
    split: str | None = field(default=None, metadata={"help": "Hub split to read instead of the adapter's."})

    def options(self, given: SourceOptions, revision: str | None) -> SourceOptions:
        """The adapters' options of this read: the given settings, this read's split and revision."""
        from dataclasses import replace

        return replace(given, progress=True, split=self.split, revision=revision)
