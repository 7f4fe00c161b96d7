"""The model-free contract shared by builders and the audit: row schemas, the score formula,
judged-input hashing, row digests (the value hash of :mod:`spl_hf.contract.digest`) and composition
tables. Imports no model, backend, build, audit or derive code, so both sides (and the derivation)
depend on it and never on each other."""

from __future__ import annotations

from typing import TYPE_CHECKING

from spl_hf.lazy import lazy_exports

if TYPE_CHECKING:
    from spl_hf.contract.composition import (
        CompositionTables,
        JudgeComparisonTables,
        RulePairRow,
        TopicRow,
        VerdictPairRow,
        composition_tables,
        judge_comparison_tables,
    )
    from spl_hf.contract.decontamination import (
        DECONTAMINATION_FILE,
        DecontaminationRecord,
        read_decontamination,
    )
    from spl_hf.contract.digest import combine, combine_scalar, hash_array, hash_value
    from spl_hf.contract.gates import (
        GATE_SETTINGS,
        JUDGE_GATES,
        ROW_GATE,
        GateResult,
        gate_record,
        gate_results,
        gate_settings,
        label_mass,
        no_rows_concerned,
        row_gate,
    )
    from spl_hf.contract.licenses import (
        LICENSE_FILE,
        SPL_INTRO,
        SPL_SOURCE_LICENSES,
        TENET_INTRO,
        license_text,
        pool_licenses,
        spl_license_fields,
        spl_source_licenses,
        tenet_license_fields,
    )
    from spl_hf.contract.messages import MESSAGES
    from spl_hf.contract.orderings import (
        INCONSISTENT,
        POSITION_TEXT,
        POSITIONS,
        NamedOrderings,
        name_orderings,
        position_codes,
    )
    from spl_hf.contract.producers import IDENTITY_FIELDS, identity_key, record_identity, stated_key
    from spl_hf.contract.quality import (
        TenetQuality,
        flat_figures,
        judge_quality,
        judge_quality_section,
        position_counts,
        section_of,
        tenet_quality,
    )
    from spl_hf.contract.scores import (
        REHEARSAL_MODEL_ID,
        pair_input_hash,
        score_from_probs,
        scores_from_probs,
    )
    from spl_hf.contract.settings import ASSIGN_SETTINGS, expected_settings, stated_settings
    from spl_hf.contract.spl_quality import (
        record_label_quality,
        released_judge_quality,
        released_label_status,
    )
    from spl_hf.contract.tenet_rows import (
        CERTIFICATE_FILE,
        DIGEST_DERIVATION,
        JUDGE_FIELDS,
        JUDGED_SCORE_COLUMNS,
        ROW_FEATURES,
        SCORE_FEATURES,
        check_inputs,
        first_content,
        input_hashes,
        oriented_input_hashes_arrow,
        pair_hashes,
        row_digests,
        score_index,
    )


# module -> the names this face re-exports from it (as imported under TYPE_CHECKING, for readers)
_EXPORTS: dict[str, tuple[str, ...]] = {
    "spl_hf.contract.composition": (
        "CompositionTables",
        "JudgeComparisonTables",
        "RulePairRow",
        "TopicRow",
        "VerdictPairRow",
        "composition_tables",
        "judge_comparison_tables",
    ),
    "spl_hf.contract.decontamination": (
        "DECONTAMINATION_FILE",
        "DecontaminationRecord",
        "read_decontamination",
    ),
    "spl_hf.contract.digest": (
        "combine",
        "combine_scalar",
        "hash_array",
        "hash_value",
    ),
    "spl_hf.contract.gates": (
        "GATE_SETTINGS",
        "JUDGE_GATES",
        "ROW_GATE",
        "GateResult",
        "gate_record",
        "gate_results",
        "gate_settings",
        "label_mass",
        "no_rows_concerned",
        "row_gate",
    ),
    "spl_hf.contract.licenses": (
        "LICENSE_FILE",
        "SPL_INTRO",
        "SPL_SOURCE_LICENSES",
        "TENET_INTRO",
        "license_text",
        "pool_licenses",
        "spl_license_fields",
        "spl_source_licenses",
        "tenet_license_fields",
    ),
    "spl_hf.contract.messages": ("MESSAGES",),
    "spl_hf.contract.orderings": (
        "INCONSISTENT",
        "POSITION_TEXT",
        "POSITIONS",
        "NamedOrderings",
        "name_orderings",
        "position_codes",
    ),
    "spl_hf.contract.producers": (
        "IDENTITY_FIELDS",
        "identity_key",
        "record_identity",
        "stated_key",
    ),
    "spl_hf.contract.quality": (
        "TenetQuality",
        "flat_figures",
        "judge_quality",
        "judge_quality_section",
        "position_counts",
        "section_of",
        "tenet_quality",
    ),
    "spl_hf.contract.scores": (
        "REHEARSAL_MODEL_ID",
        "pair_input_hash",
        "score_from_probs",
        "scores_from_probs",
    ),
    "spl_hf.contract.settings": (
        "ASSIGN_SETTINGS",
        "expected_settings",
        "stated_settings",
    ),
    "spl_hf.contract.spl_quality": (
        "record_label_quality",
        "released_judge_quality",
        "released_label_status",
    ),
    "spl_hf.contract.tenet_rows": (
        "CERTIFICATE_FILE",
        "DIGEST_DERIVATION",
        "JUDGE_FIELDS",
        "JUDGED_SCORE_COLUMNS",
        "ROW_FEATURES",
        "SCORE_FEATURES",
        "check_inputs",
        "first_content",
        "input_hashes",
        "oriented_input_hashes_arrow",
        "pair_hashes",
        "row_digests",
        "score_index",
    ),
}

__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
