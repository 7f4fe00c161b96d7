from spl_hf.derive.derivation import derive_row, derive_table, encode_attributes
from spl_hf.derive.features import (
    DIGEST_COLUMNS,
    DIGEST_DERIVATION_FIELDS,
    MESSAGES,
    NO_LABEL_REASONS,
    derived_features,
    pair_features,
)

__all__ = [
    "DIGEST_COLUMNS",
    "DIGEST_DERIVATION_FIELDS",
    "MESSAGES",
    "NO_LABEL_REASONS",
    "derive_row",
    "derive_table",
    "derived_features",
    "encode_attributes",
    "pair_features",
]
