"""Why a row of a release says what it says, from the release alone (no model, no solver)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from spl_hf.lazy import lazy_exports

if TYPE_CHECKING:
    from spl_hf.explain._render import move_sentence, render
    from spl_hf.explain.config import ExplainArgs
    from spl_hf.explain.entry import audit_verdict, explain, explain_ref
    from spl_hf.explain.locate import RowRef, find_row
    from spl_hf.explain.release import Release, ReleaseError, open_release

# module -> the names this face re-exports from it (as imported under TYPE_CHECKING, for readers)
_EXPORTS: dict[str, tuple[str, ...]] = {
    "spl_hf.explain._render": ("move_sentence", "render"),
    "spl_hf.explain.config": ("ExplainArgs",),
    "spl_hf.explain.entry": (
        "audit_verdict",
        "explain",
        "explain_ref",
    ),
    "spl_hf.explain.locate": (
        "RowRef",
        "find_row",
    ),
    "spl_hf.explain.release": (
        "Release",
        "ReleaseError",
        "open_release",
    ),
}

__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
