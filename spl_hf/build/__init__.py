from __future__ import annotations

from typing import TYPE_CHECKING

from spl_hf.lazy import lazy_exports

if TYPE_CHECKING:
    from spl_hf.build.spl import SPLBuildConfig, SPLBuildResult, build_spl, derive_dataset

__all__ = ["SPLBuildConfig", "SPLBuildResult", "build_spl", "derive_dataset"]

__getattr__, __dir__ = lazy_exports(__name__, __file__)
