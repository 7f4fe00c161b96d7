"""Composition tables of a built SPL dataset: defined in the shared contract, re-exported here."""

from spl_hf.contract import (
    CompositionTables,
    RulePairRow,
    TopicRow,
    VerdictPairRow,
    composition_tables,
)

__all__ = ["CompositionTables", "RulePairRow", "TopicRow", "VerdictPairRow", "composition_tables"]
