"""Decontamination: remove training prompts that match held-out evaluation prompts, and recheck it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from spl_hf.lazy import lazy_exports

if TYPE_CHECKING:
    from spl_hf.decontam._decontaminate import (
        REMOVED_SCHEMA,
        DecontamResult,
        RecheckResult,
        decontaminate,
        near_by_score,
        recheck,
        transcript_user_turns,
        user_turns,
    )
    from spl_hf.decontam.config import DEFAULT_HELDOUT, DecontamConfig
    from spl_hf.decontam.index import CONTAINED, EXACT, NEAR, HeldoutIndex, Match
    from spl_hf.decontam.normalize import ngrams, normalize_prompt


# module -> the names this face re-exports from it (as imported under TYPE_CHECKING, for readers)
_EXPORTS: dict[str, tuple[str, ...]] = {
    "spl_hf.decontam._decontaminate": (
        "REMOVED_SCHEMA",
        "DecontamResult",
        "RecheckResult",
        "decontaminate",
        "near_by_score",
        "recheck",
        "transcript_user_turns",
        "user_turns",
    ),
    "spl_hf.decontam.config": (
        "DEFAULT_HELDOUT",
        "DecontamConfig",
    ),
    "spl_hf.decontam.index": (
        "CONTAINED",
        "EXACT",
        "NEAR",
        "HeldoutIndex",
        "Match",
    ),
    "spl_hf.decontam.normalize": (
        "ngrams",
        "normalize_prompt",
    ),
}

__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
