"""Release builders: each release from its sources to a published dataset, in resumable stages."""

from spl_hf.release.stages import StageOutcome, StageRunner, fingerprint, stage_key

__all__ = ["StageOutcome", "StageRunner", "fingerprint", "stage_key"]
