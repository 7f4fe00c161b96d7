"""UltraFeedback binarized: prompt plus chosen/rejected [user, assistant] message lists."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from spl_hf.sources.adapter import Converted, PairAdapter, QuickPair, Record, SourceOptions
from spl_hf.sources.fields import RowError, check_pair, get_number, get_text, get_value
from spl_hf.sources.io import HubSpec
from spl_hf.sources.rows import NO_SAFETY, PairDraft


def final_assistant_text(messages: Any, field: str) -> str:
    if not isinstance(messages, Sequence) or isinstance(messages, str) or not messages:
        raise RowError("wrong_type", field, f"{field!r} should be a non-empty list of messages")
    last = messages[-1]
    if not isinstance(last, dict) or last.get("role") != "assistant":
        raise RowError("bad_role_sequence", field, f"{field!r} does not end with an assistant message")
    content = last.get("content")
    if not isinstance(content, str):
        raise RowError("wrong_type", field, f"{field!r} final message content is not a string")
    return content


def convert_ultrafeedback(record: Record, options: SourceOptions) -> Converted:
    prompt = get_text(record, "prompt", empty_reason="empty_prompt")
    a = final_assistant_text(get_value(record, "chosen"), "chosen")
    b = final_assistant_text(get_value(record, "rejected"), "rejected")
    check_pair(a, b, "chosen", "rejected")
    # Binarization picks the best-rated completion as chosen; equal ratings mean the source has no
    # direction between the two, which is a tie rather than a preference for "a".
    score_a, score_b = get_number(record, "score_chosen"), get_number(record, "score_rejected")
    tie = score_a is not None and score_b is not None and score_a == score_b
    return Converted(pairs=(PairDraft.single(prompt, a, b, "tie" if tie else "a"),))


def _quick_final(messages: object) -> str | None:
    if type(messages) is not list or not messages:
        return None
    last = messages[-1]
    if type(last) is not dict or last.get("role") != "assistant":
        return None
    content = last.get("content")
    return content if type(content) is str else None


def _quick_number(value: object) -> float | bool | None:
    """A score's number (None: absent or NaN), or False where :func:`get_number` has to decide."""
    if value is None:
        return None
    if type(value) is float:
        return None if math.isnan(value) else value
    return float(value) if type(value) is int else False


def quick_ultrafeedback(record: Record, options: SourceOptions) -> QuickPair | None:
    """:func:`convert_ultrafeedback`'s pair for a record of plain types (a non-blank prompt, message
    lists ending with an assistant message of text, numeric or absent scores); None otherwise."""
    prompt = record.get("prompt")
    if type(prompt) is not str or not prompt.strip():
        return None
    a, b = _quick_final(record.get("chosen")), _quick_final(record.get("rejected"))
    score_a, score_b = _quick_number(record.get("score_chosen")), _quick_number(record.get("score_rejected"))
    if a is None or b is None or score_a is False or score_b is False:
        return None
    tie = score_a is not None and score_b is not None and score_a == score_b
    return prompt, a, b, "tie" if tie else "a", NO_SAFETY.columns(), None


ULTRAFEEDBACK = PairAdapter(
    name="ultrafeedback_train",
    hub=HubSpec("HuggingFaceH4/ultrafeedback_binarized", split="train_prefs"),
    license="mit",
    description="UltraFeedback binarized train_prefs: chosen as a, rejected as b (tie when the scores are equal).",
    schemas=(("prompt", "chosen", "rejected"),),
    convert=convert_ultrafeedback,
    quick=quick_ultrafeedback,
)
