from spl_hf.build.spl import SPLBuildConfig, SPLBuildResult, build_spl, derive_dataset

__all__ = ["SPLBuildConfig", "SPLBuildResult", "build_spl", "derive_dataset"]
