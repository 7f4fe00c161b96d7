"""Refusal detection without a model: published keyword matchers, vectorised matching, refusal rates,
and agreement between classifiers. Pure: no model or I/O code."""

from __future__ import annotations

from typing import TYPE_CHECKING

from spl_hf.lazy import lazy_exports

if TYPE_CHECKING:
    from spl_hf.refusal._agreement import Agreement, agreement
    from spl_hf.refusal._normalise import normalise
    from spl_hf.refusal.match import match_array, match_one
    from spl_hf.refusal.matchers import MATCHERS, Matcher, get_matcher
    from spl_hf.refusal.result import GroupRate, RefusalResult, compute_refusal

# module -> the names this face re-exports from it (as imported under TYPE_CHECKING, for readers)
_EXPORTS: dict[str, tuple[str, ...]] = {
    "spl_hf.refusal._agreement": (
        "Agreement",
        "agreement",
    ),
    "spl_hf.refusal._normalise": ("normalise",),
    "spl_hf.refusal.match": (
        "match_array",
        "match_one",
    ),
    "spl_hf.refusal.matchers": (
        "MATCHERS",
        "Matcher",
        "get_matcher",
    ),
    "spl_hf.refusal.result": (
        "GroupRate",
        "RefusalResult",
        "compute_refusal",
    ),
}

__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
