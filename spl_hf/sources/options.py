"""Options of the source adapters and of ``spl-hf sources read`` (no heavy import: ``--help`` reads them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from spl_hf.errors import SplHfError
from spl_hf.sources.transcript import DEFAULT_CLIP_CHARS


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
            raise SplHfError(
                f"clip_chars must be a positive number of characters or None, got {self.clip_chars!r}"
            )
        if self.max_text_chars is not None and (
            isinstance(self.max_text_chars, bool) or self.max_text_chars <= 0
        ):
            raise SplHfError(f"max_text_chars must be a positive number or None, got {self.max_text_chars!r}")
        known = {"standard", "contextual", "copyright"}
        if (
            isinstance(self.harmbench_categories, str)
            or not self.harmbench_categories
            or not set(self.harmbench_categories) <= known
        ):
            raise SplHfError(
                f"harmbench_categories must be a non-empty subset of {sorted(known)}, got {self.harmbench_categories!r}"
            )
        if self.pku_preference not in ("safer", "better"):
            raise SplHfError(f"pku_preference must be 'safer' or 'better', got {self.pku_preference!r}")


@dataclass
class SourcesReadArgs:
    """What to read"""

    source: str = field(
        metadata={
            "help": "Adapter name (see `spl-hf sources list`); 'preference' reads any preference file (TRL's "
            "prompt/chosen/rejected formats, or other columns through --columns)."
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
    clip_chars: int | None = field(
        default=None,
        metadata={
            "help": "Character budget for flattened multi-turn histories "
            f"(default {DEFAULT_CLIP_CHARS}; 0 = no clipping)."
        },
    )
    pku_preference: Literal["safer", "better"] = field(
        default="safer",
        metadata={
            "help": "PKU-SafeRLHF label used as source_preference (safer_response_id or better_response_id)."
        },
    )
    seed: int = field(default=42, metadata={"help": "Seed of the representative-pair draw (ca_en_mt_p1)."})
    pku_drop_both_unsafe: bool = field(
        default=False,
        metadata={
            "help": "PKU-SafeRLHF: leave out pairs whose two responses are both labelled unsafe (counted as filtered)."
        },
    )
    harmbench_category: list[Literal["standard", "contextual", "copyright"]] | None = field(
        default=None,
        metadata={
            "help": "HarmBench official CSV: FunctionalCategory values to keep; several may be given (default: "
            "standard, the 200 behaviours of the Hub config walledai/HarmBench standard)."
        },
    )
    max_text_chars: int | None = field(
        default=None,
        metadata={
            "help": "Longest prompt/response kept, in characters; longer ones are quarantined (default 200000; "
            "0 = no limit)."
        },
    )
    split: str | None = field(default=None, metadata={"help": "Hub split to read instead of the adapter's."})
    accept_partial: bool = field(
        default=False,
        metadata={
            "help": "Keep the readable part of a file that breaks off (a truncated .gz, an unclosed JSON list) "
            "and mark the source partial; without it such a file is an error naming it."
        },
    )

    def options(self, revision: str | None) -> SourceOptions:
        """The adapters' options (0 means no limit on the command line, None in SourceOptions)."""
        kwargs: dict[str, Any] = {
            "progress": True,
            "seed": self.seed,
            "pku_preference": self.pku_preference,
            "split": self.split,
            "revision": revision,
            "pku_drop_both_unsafe": self.pku_drop_both_unsafe,
            "accept_partial": self.accept_partial,
        }
        if self.harmbench_category:
            kwargs["harmbench_categories"] = tuple(dict.fromkeys(self.harmbench_category))
        if self.max_text_chars is not None:
            if self.max_text_chars < 0:
                raise SplHfError(
                    f"--max_text_chars must be >= 0 (0 disables the limit), got {self.max_text_chars}"
                )
            kwargs["max_text_chars"] = self.max_text_chars or None
        if self.clip_chars is not None:
            if self.clip_chars < 0:
                raise SplHfError(f"--clip_chars must be >= 0 (0 disables clipping), got {self.clip_chars}")
            kwargs["clip_chars"] = self.clip_chars or None
        return SourceOptions(**kwargs)
