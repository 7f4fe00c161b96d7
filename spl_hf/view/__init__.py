"""A release viewer: card, figures, rows with filters and search, and the explanation of any row."""

from __future__ import annotations

from typing import TYPE_CHECKING

from spl_hf.lazy import lazy_exports

if TYPE_CHECKING:
    from spl_hf.view._serve import serve
    from spl_hf.view.app import build_app
    from spl_hf.view.config import ViewArgs
    from spl_hf.view.rows import Page, RowFilter, RowsIndex, rows_index
    from spl_hf.view.session import ViewerSession

# module -> the names this face re-exports from it (as imported under TYPE_CHECKING, for readers)
_EXPORTS: dict[str, tuple[str, ...]] = {
    "spl_hf.view._serve": ("serve",),
    "spl_hf.view.app": ("build_app",),
    "spl_hf.view.config": ("ViewArgs",),
    "spl_hf.view.rows": (
        "Page",
        "RowFilter",
        "RowsIndex",
        "rows_index",
    ),
    "spl_hf.view.session": ("ViewerSession",),
}

__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
