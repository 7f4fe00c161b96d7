"""PKU-SafeRLHF: one prompt, two responses, safety and helpfulness preferences."""

from __future__ import annotations

from spl_hf.sources.adapter import Converted, PairAdapter, Record, SourceOptions
from spl_hf.sources.fields import RowError, check_pair, get_int, get_text
from spl_hf.sources.io import HubSpec
from spl_hf.sources.rows import PairDraft

_PREFERENCE_FIELD = {"safer": "safer_response_id", "better": "better_response_id"}


def convert_pku(record: Record, options: SourceOptions) -> Converted:
    prompt = get_text(record, "prompt", empty_reason="empty_prompt")
    a = get_text(record, "response_0", empty_reason="empty_response")
    b = get_text(record, "response_1", empty_reason="empty_response")
    check_pair(a, b, "response_0", "response_1")
    field = _PREFERENCE_FIELD[options.pku_preference]
    winner = get_int(record, field)
    if winner not in (0, 1):
        raise RowError("bad_value", field, f"{field!r} should be 0 or 1, got {winner}")
    return Converted(pairs=(PairDraft.single(prompt, a, b, "a" if winner == 0 else "b"),))


PKU = PairAdapter(
    name="pku_train",
    hub=HubSpec("PKU-Alignment/PKU-SafeRLHF", config="default", split="train"),
    license="cc-by-nc-4.0",
    description="PKU-SafeRLHF train: response_0/response_1 as a/b; source_preference from safer_response_id "
    "(or better_response_id with pku_preference='better').",
    schemas=(("prompt", "response_0", "response_1", "safer_response_id", "better_response_id"),),
    convert=convert_pku,
)
