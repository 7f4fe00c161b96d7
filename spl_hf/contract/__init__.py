"""The model-free contract shared by builders and the audit: row schemas, the score formula,
judged-input hashing, row digests and composition tables. Imports no model, backend, build or
audit code, so both sides depend on it and never on each other."""

from __future__ import annotations

from typing import TYPE_CHECKING

from spl_hf.lazy import lazy_exports

if TYPE_CHECKING:
    from spl_hf.contract.composition import CompositionTables, composition_tables
    from spl_hf.contract.scores import pair_input_hash, score_from_probs, scores_from_probs
    from spl_hf.contract.tenet_rows import (
        CERTIFICATE_FILE,
        JUDGE_FIELDS,
        ROW_FEATURES,
        SCORE_FEATURES,
        check_inputs,
        input_hashes,
        oriented_input_hashes_arrow,
        row_digests,
        score_index,
    )


__all__ = [
    "CERTIFICATE_FILE",
    "JUDGE_FIELDS",
    "ROW_FEATURES",
    "SCORE_FEATURES",
    "CompositionTables",
    "check_inputs",
    "composition_tables",
    "input_hashes",
    "oriented_input_hashes_arrow",
    "pair_input_hash",
    "row_digests",
    "score_from_probs",
    "score_index",
    "scores_from_probs",
]

__getattr__, __dir__ = lazy_exports(__name__, __file__)
