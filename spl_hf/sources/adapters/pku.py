"""PKU-SafeRLHF: one prompt, two responses, safety and helpfulness preferences.

response_0/response_1 are a/b. The source's safety labels travel with the pair:
``is_response_{0,1}_safe`` as ``response_{a,b}_safe`` and ``response_{0,1}_severity_level`` (0 safe,
1-3 unsafe) as ``response_{a,b}_severity``, null when a record lacks them, so a build can filter on
them. ``SourceOptions.pku_drop_both_unsafe`` leaves out pairs whose two responses are both unsafe
(counted as filtered, ``both_unsafe``); with it on, both flags are required (a pair that cannot be
checked is quarantined rather than kept unchecked). Malformed besides the shared reasons: a flag that
is not a boolean, a severity outside 0-3.
"""

from __future__ import annotations

from spl_hf.sources.adapter import Converted, PairAdapter, QuickPair, Record, SourceOptions
from spl_hf.sources.fields import RowError, check_pair, get_int, get_optional_bool, get_text
from spl_hf.sources.io import HubSpec
from spl_hf.sources.rows import PairDraft, Safety

_PREFERENCE_FIELD = {"safer": "safer_response_id", "better": "better_response_id"}


def _severity(record: Record, field: str) -> int | None:
    if record.get(field) is None or record.get(field) == "":
        return None
    level = get_int(record, field)
    if not 0 <= level <= 3:
        raise RowError("bad_value", field, f"{field!r} should be 0-3, got {level}")
    return level


def read_safety(record: Record) -> Safety:
    return Safety(
        get_optional_bool(record, "is_response_0_safe"),
        get_optional_bool(record, "is_response_1_safe"),
        _severity(record, "response_0_severity_level"),
        _severity(record, "response_1_severity_level"),
    )


def convert_pku(record: Record, options: SourceOptions) -> Converted:
    prompt = get_text(record, "prompt", empty_reason="empty_prompt")
    a = get_text(record, "response_0", empty_reason="empty_response")
    b = get_text(record, "response_1", empty_reason="empty_response")
    check_pair(a, b, "response_0", "response_1")
    field = _PREFERENCE_FIELD[options.pku_preference]
    winner = get_int(record, field)
    if winner not in (0, 1):
        raise RowError("bad_value", field, f"{field!r} should be 0 or 1, got {winner}")
    safety = read_safety(record)
    if options.pku_drop_both_unsafe:
        for flag, name in ((safety.a_safe, "is_response_0_safe"), (safety.b_safe, "is_response_1_safe")):
            if flag is None:
                raise RowError(
                    "missing_field", name, f"{name!r} is needed to drop pairs with both responses unsafe"
                )
        if not safety.a_safe and not safety.b_safe:
            return Converted(skipped="both_unsafe")
    return Converted(pairs=(PairDraft.single(prompt, a, b, "a" if winner == 0 else "b", safety=safety),))


def _quick_flag(value: object) -> bool:
    return value is None or type(value) is bool


def _quick_level(value: object) -> bool:
    return value is None or (type(value) is int and 0 <= value <= 3)


def quick_pku(record: Record, options: SourceOptions) -> QuickPair | None:
    """:func:`convert_pku`'s pair for a record of plain types (texts non-blank, a 0/1 winner, boolean
    flags, integer severities 0-3, each flag or severity absent or null at most); None otherwise."""
    if options.pku_drop_both_unsafe:
        return None
    prompt, a, b = record.get("prompt"), record.get("response_0"), record.get("response_1")
    winner = record.get(_PREFERENCE_FIELD[options.pku_preference])
    if type(prompt) is not str or type(a) is not str or type(b) is not str or type(winner) is not int:
        return None
    if winner not in (0, 1) or not prompt.strip() or not a.strip() or not b.strip():
        return None
    safety = (
        record.get("is_response_0_safe"),
        record.get("is_response_1_safe"),
        record.get("response_0_severity_level"),
        record.get("response_1_severity_level"),
    )
    if not (_quick_flag(safety[0]) and _quick_flag(safety[1])):
        return None
    if not (_quick_level(safety[2]) and _quick_level(safety[3])):
        return None
    return prompt, a, b, "a" if winner == 0 else "b", safety, None


PKU = PairAdapter(
    name="pku_train",
    hub=HubSpec("PKU-Alignment/PKU-SafeRLHF", config="default", split="train"),
    license="cc-by-nc-4.0",
    description="PKU-SafeRLHF train: response_0/response_1 as a/b; source_preference from safer_response_id "
    "(or better_response_id with pku_preference='better'); safety flags and severities kept.",
    schemas=(("prompt", "response_0", "response_1", "safer_response_id", "better_response_id"),),
    convert=convert_pku,
    quick=quick_pku,
)
