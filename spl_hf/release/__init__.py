"""Release builders: each release from its sources to a published dataset, in resumable stages."""

from __future__ import annotations

from typing import TYPE_CHECKING

from spl_hf.lazy import lazy_exports

if TYPE_CHECKING:
    from spl_hf.release.stages import StageOutcome, StageRunner, fingerprint, stage_key
    from spl_hf.release.written import manifest_hash

# module -> the names this face re-exports from it (as imported under TYPE_CHECKING, for readers)
_EXPORTS: dict[str, tuple[str, ...]] = {
    "spl_hf.release.stages": (
        "StageOutcome",
        "StageRunner",
        "fingerprint",
        "stage_key",
    ),
    "spl_hf.release.written": ("manifest_hash",),
}

__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
