from __future__ import annotations

from typing import TYPE_CHECKING

from spl_hf.lazy import lazy_exports

if TYPE_CHECKING:
    from spl_hf.derive.derivation import (
        column_array,
        derive_codes,
        derive_row,
        derive_table,
        encode_attributes,
        filled,
        row_digests,
    )
    from spl_hf.derive.features import (
        DIGEST_COLUMNS,
        DIGEST_DERIVATION_FIELDS,
        NO_LABEL_REASONS,
        PRODUCER_FIELDS,
        derived_features,
        pair_features,
    )
    from spl_hf.derive.pairs import apply_labels, candidate_pairs, pairs_from_records, read_jsonl
    from spl_hf.derive.verdict_labels import (
        JUDGE_COLUMN,
        JUDGE_NO_LABEL_REASONS,
        JudgeTables,
        VerdictRecord,
        common_features,
        judge_codes,
        judge_column,
        judge_digests,
        judge_features,
        judge_identity,
        judge_tables,
        parse_verdict_records,
        verdict_options,
        verdict_record_json,
    )


# module -> the names this face re-exports from it (as imported under TYPE_CHECKING, for readers)
_EXPORTS: dict[str, tuple[str, ...]] = {
    "spl_hf.derive.derivation": (
        "column_array",
        "derive_codes",
        "derive_row",
        "derive_table",
        "encode_attributes",
        "filled",
        "row_digests",
    ),
    "spl_hf.derive.features": (
        "DIGEST_COLUMNS",
        "DIGEST_DERIVATION_FIELDS",
        "NO_LABEL_REASONS",
        "PRODUCER_FIELDS",
        "derived_features",
        "pair_features",
    ),
    "spl_hf.derive.pairs": (
        "apply_labels",
        "candidate_pairs",
        "pairs_from_records",
        "read_jsonl",
    ),
    "spl_hf.derive.verdict_labels": (
        "JUDGE_COLUMN",
        "JUDGE_NO_LABEL_REASONS",
        "JudgeTables",
        "VerdictRecord",
        "common_features",
        "judge_codes",
        "judge_column",
        "judge_digests",
        "judge_features",
        "judge_identity",
        "judge_tables",
        "parse_verdict_records",
        "verdict_options",
        "verdict_record_json",
    ),
}

__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
