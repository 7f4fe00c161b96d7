"""Typed columns of SPL pair rows and of their recorded derivation.

Derivation columns are typed structs (not JSON strings), so that any ``datasets`` reader
gets them with their types and the viewer shows them field by field.
"""

from __future__ import annotations

from datasets import Features, List, Value

from spl_hf.contract import MESSAGES
from spl_hf.schema import AttributeSchema

NO_LABEL_REASONS = (
    "missing_attributes",  # an attribute assignment is absent (e.g. unparsable labeler output)
    "conflicting_verdicts",  # rules with different verdicts fired on one response
    "no_verdict",  # no rule fired on a response
    "equal_ranks",  # both verdicts have the same rank
    "margin_not_met",  # ranks differ by less than the configured margin
)


def attribute_struct(schema: AttributeSchema, scope: str) -> dict:
    attrs = schema.prompt if scope == "prompt" else schema.response
    return {a.name: Value("bool") if a.kind == "bool" else Value("string") for a in attrs}


# Who produced each model output of a pair: the short key (``spl_hf.contract.identity_key``) of an
# identity the build report's ``producers`` lists, or null where the records name none.
PRODUCER_FIELDS = {
    "prompt_labeler": "labeler",
    "response_a_labeler": "labeler",
    "response_b_labeler": "labeler",
    "response_a_generator": "generator",
    "response_b_generator": "generator",
}


def producers_struct() -> dict:
    return {name: Value("string") for name in PRODUCER_FIELDS}


def derivation_struct() -> dict:
    return {
        "rules_a": List(Value("string")),
        "rules_b": List(Value("string")),
        "verdict_a": Value("string"),
        "verdict_b": Value("string"),
        "rank_a": Value("int32"),
        "rank_b": Value("int32"),
        "rank_diff": Value("int32"),
        "label": Value("string"),
        "no_label_reason": Value("string"),
        "margin": Value("int32"),
        "rulebase_id": Value("string"),
        "rulebase_hash": Value("string"),
        "digest": Value("string"),
    }


def pair_features(schema: AttributeSchema) -> Features:
    """Columns of a candidate pair with its recorded attribute assignments (derive's input)."""
    return Features(
        {
            "pair_id": Value("string"),
            "prompt_id": Value("string"),
            "source": Value("string"),
            "source_category": Value("string"),
            "prompt": MESSAGES,
            "response_a": Value("string"),
            "response_b": Value("string"),
            "instruction_a": Value("string"),
            "instruction_b": Value("string"),
            "prompt_attributes": attribute_struct(schema, "prompt"),
            "response_a_attributes": attribute_struct(schema, "response"),
            "response_b_attributes": attribute_struct(schema, "response"),
            # How each assignment came out of the labeler ("ok", "invalid_json", ...): a failed
            # parse leaves the attributes null and is recorded here, never replaced by a default.
            "attribute_status": {
                "prompt": Value("string"),
                "response_a": Value("string"),
                "response_b": Value("string"),
            },
            "producers": producers_struct(),
        }
    )


def derived_features(schema: AttributeSchema) -> Features:
    """Pair columns plus the recorded derivation and the DPO ``chosen``/``rejected`` messages.

    >>> from spl_hf.rules import default_rulebase
    >>> schema = default_rulebase().schema
    >>> [c for c in derived_features(schema) if c not in pair_features(schema)]
    ['derivation', 'chosen', 'rejected']
    """
    feats = pair_features(schema)
    feats["derivation"] = derivation_struct()
    feats["chosen"] = MESSAGES
    feats["rejected"] = MESSAGES
    return feats


# Columns folded into the per-row digest. Derived outputs that audit recomputes from these
# (applied rules, verdicts, label, reason, chosen/rejected) are checked by recomputation.
DIGEST_COLUMNS = (
    "pair_id",
    "prompt_id",
    "source",
    "source_category",
    "prompt",
    "response_a",
    "response_b",
    "instruction_a",
    "instruction_b",
    "prompt_attributes",
    "response_a_attributes",
    "response_b_attributes",
    "attribute_status",
    "producers",
)
DIGEST_DERIVATION_FIELDS = ("rank_a", "rank_b", "rank_diff", "margin", "rulebase_id", "rulebase_hash")
