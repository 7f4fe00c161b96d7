"""Statistics across training seeds (pure: no I/O, no model)."""

from spl_hf.stats.seeds import (
    ONE_VALUE_NOTE,
    ZERO_SPREAD_NOTE,
    PairedContrast,
    SeedSummary,
    describe,
    paired_contrast,
)

__all__ = [
    "ONE_VALUE_NOTE",
    "ZERO_SPREAD_NOTE",
    "PairedContrast",
    "SeedSummary",
    "describe",
    "paired_contrast",
]
