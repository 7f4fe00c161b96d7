"""HH-RLHF harmless-base: chosen/rejected are whole ``\\n\\nHuman: … \\n\\nAssistant: …`` transcripts.

The prompt is the shared transcript up to the last ``\\n\\nAssistant:`` of each side, kept in its
native form (leading blank lines trimmed, never clipped) as one user message; the responses are the
text after that marker with surrounding whitespace trimmed, which absorbs the irregular spacing
after ``Assistant:``.
Finding the split with the *last* marker means an embedded ``Human:`` inside the final reply (even an
imagined ``\\n\\nHuman:`` turn) stays part of the reply; a reply that also contains
``\\n\\nAssistant:`` moves its side's split and shows up as a prefix mismatch.
Malformed: the two sides disagree before their final assistant turn (``hh_prefix_mismatch``), a
side has no assistant turn, the transcript does not open with a human turn, or a final reply is
empty or both replies are the same text.
"""

from __future__ import annotations

from typing import Any

from spl_hf.sources.adapter import Converted, PairAdapter, Record, SourceOptions
from spl_hf.sources.fields import RowError, check_pair, get_value
from spl_hf.sources.io import HubSpec
from spl_hf.sources.rows import PairDraft

ASSISTANT_MARKER = "\n\nAssistant:"


def split_final_turn(transcript: Any, field: str) -> tuple[str, str]:
    """(prefix before the final assistant turn, final assistant reply)."""
    if not isinstance(transcript, str):
        raise RowError("wrong_type", field, f"{field!r} should be a string, got {type(transcript).__name__}")
    cut = transcript.rfind(ASSISTANT_MARKER)
    if cut < 0:
        raise RowError("hh_no_assistant_turn", field, f"{field!r} has no '\\n\\nAssistant:' turn")
    return transcript[:cut], transcript[cut + len(ASSISTANT_MARKER) :].strip()


def _first_difference(a: str, b: str) -> int:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return min(len(a), len(b))


def convert_hh(record: Record, options: SourceOptions) -> Converted:
    prefix_a, a = split_final_turn(get_value(record, "chosen"), "chosen")
    prefix_b, b = split_final_turn(get_value(record, "rejected"), "rejected")
    if prefix_a != prefix_b:
        at = _first_difference(prefix_a, prefix_b)
        raise RowError(
            "hh_prefix_mismatch",
            "rejected",
            f"chosen and rejected differ before their final assistant turn (first difference at character {at})",
        )
    prompt = prefix_a.lstrip()
    if not prompt.startswith("Human:"):
        raise RowError("bad_role_sequence", "chosen", "transcript does not start with a 'Human:' turn")
    check_pair(a, b, "chosen", "rejected")
    return Converted(pairs=(PairDraft.single(prompt, a, b, "a"),))


HH = PairAdapter(
    name="hh_train",
    hub=HubSpec("Anthropic/hh-rlhf", data_dir="harmless-base", split="train"),
    license="mit",
    description="HH-RLHF harmless-base train: native Human/Assistant transcript as the prompt; "
    "final chosen reply as a, final rejected reply as b.",
    schemas=(("chosen", "rejected"),),
    convert=convert_hh,
)
