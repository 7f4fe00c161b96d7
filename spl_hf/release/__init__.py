"""Release builders: each release from its sources to a published dataset, in resumable stages."""

from __future__ import annotations

from typing import TYPE_CHECKING

from spl_hf.lazy import lazy_exports

if TYPE_CHECKING:
    from spl_hf.release.stages import StageOutcome, StageRunner, fingerprint, stage_key
    from spl_hf.release.written import manifest_hash

__all__ = [
    "StageOutcome",
    "StageRunner",
    "fingerprint",
    "manifest_hash",
    "stage_key",
]

__getattr__, __dir__ = lazy_exports(__name__, __file__)
