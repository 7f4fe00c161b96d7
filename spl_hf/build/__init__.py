from __future__ import annotations

from typing import TYPE_CHECKING

from spl_hf.lazy import lazy_exports

if TYPE_CHECKING:
    from spl_hf.build.config import SPLBuildConfig, SPLDeriveArgs, TenetBuildConfig, TenetCardArgs, fields_of
    from spl_hf.build.judge_quality import judged_quality
    from spl_hf.build.spl import SPLBuildResult, build_spl, derive_dataset, sample_path
    from spl_hf.build.tenets import build_tenets

# module -> the names this face re-exports from it (as imported under TYPE_CHECKING, for readers)
_EXPORTS: dict[str, tuple[str, ...]] = {
    "spl_hf.build.config": (
        "SPLBuildConfig",
        "SPLDeriveArgs",
        "TenetBuildConfig",
        "TenetCardArgs",
        "fields_of",
    ),
    "spl_hf.build.judge_quality": ("judged_quality",),
    "spl_hf.build.spl": (
        "SPLBuildResult",
        "build_spl",
        "derive_dataset",
        "sample_path",
    ),
    "spl_hf.build.tenets": ("build_tenets",),
}

__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
