"""Statistics across training seeds (pure: no I/O, no model)."""

from spl_hf.stats.at_limit import ALL_SEEDS, at_limit_row, at_limit_rows
from spl_hf.stats.seeds import (
    ONE_VALUE_NOTE,
    ZERO_SPREAD_NOTE,
    PairedContrast,
    SeedSummary,
    describe,
    paired_contrast,
)

__all__ = [
    "ALL_SEEDS",
    "ONE_VALUE_NOTE",
    "ZERO_SPREAD_NOTE",
    "PairedContrast",
    "SeedSummary",
    "at_limit_row",
    "at_limit_rows",
    "describe",
    "paired_contrast",
]
