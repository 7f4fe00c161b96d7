from __future__ import annotations

from typing import TYPE_CHECKING

from spl_hf.lazy import lazy_exports

if TYPE_CHECKING:
    from spl_hf.build.config import SPLBuildConfig, TenetBuildConfig
    from spl_hf.build.spl import SPLBuildResult, build_spl, derive_dataset, sample_path
    from spl_hf.build.tenets import build_tenets

__all__ = [
    "SPLBuildConfig",
    "SPLBuildResult",
    "TenetBuildConfig",
    "build_spl",
    "build_tenets",
    "derive_dataset",
    "sample_path",
]

# module -> the names this face re-exports from it (as imported under TYPE_CHECKING, for readers)
_EXPORTS: dict[str, tuple[str, ...]] = {
    "spl_hf.build.config": ("SPLBuildConfig", "TenetBuildConfig"),
    "spl_hf.build.spl": ("SPLBuildResult", "build_spl", "derive_dataset", "sample_path"),
    "spl_hf.build.tenets": ("build_tenets",),
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
