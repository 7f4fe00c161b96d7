from __future__ import annotations

from typing import TYPE_CHECKING

from spl_hf.lazy import lazy_exports

if TYPE_CHECKING:
    from spl_hf.derive.derivation import derive_row, derive_table, encode_attributes
    from spl_hf.derive.digest import hash_array, hash_value
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
    "hash_array",
    "hash_value",
    "pair_features",
]

__getattr__, __dir__ = lazy_exports(__name__, __file__)
