"""WildFeedback: a human/gpt conversation ending on a human turn, plus chosen and rejected replies.

``wildfeedback_st`` holds conversations with exactly one human turn (the prompt is that message);
``wf_mt`` those with two or more (the history is flattened into one ``User: …`` transcript and
clipped). A conversation belonging to the other pool is counted as filtered, not quarantined.
Malformed: conversation not a list of ``{from, value}`` messages, roles other than human/gpt or not
alternating from a human turn to a final human turn, blank messages, chosen/rejected not a gpt
message, empty or identical replies.
"""

from __future__ import annotations

from typing import Any

from spl_hf.sources.adapter import Converted, PairAdapter, Record, SourceOptions
from spl_hf.sources.fields import RowError, check_pair, get_value, show
from spl_hf.sources.io import HubSpec
from spl_hf.sources.rows import PairDraft
from spl_hf.sources.transcript import Turn, check_alternation, flatten_history

ROLES = {"human": "user", "gpt": "assistant"}
HUB = HubSpec(
    "microsoft/WildFeedback",
    config="wildfeedback",
    split="train",
    revision="8b1a3e530b949d6aacfad6ba8912e209a05bc846",
)


def read_conversation(value: Any) -> list[Turn]:
    if not isinstance(value, list):
        raise RowError(
            "wrong_type", "conversations", f"'conversations' should be a list, got {type(value).__name__}"
        )
    turns: list[Turn] = []
    for i, message in enumerate(value):
        if not isinstance(message, dict) or not isinstance(message.get("value"), str):
            raise RowError(
                "wrong_type", "conversations", f"message {i} is not a {{from, value}} object with text"
            )
        sender = message.get("from")
        role = ROLES.get(sender) if isinstance(sender, str) else None
        if role is None:
            raise RowError(
                "bad_role_sequence", "conversations", f"message {i} has unknown role {show(sender)}"
            )
        if not message["value"].strip():
            raise RowError("empty_prompt", "conversations", f"message {i} is empty")
        turns.append((role, message["value"]))
    try:
        check_alternation(turns)
    except ValueError as exc:
        raise RowError("bad_role_sequence", "conversations", str(exc)) from None
    return turns


def read_reply(record: Record, field: str) -> str:
    message = get_value(record, field)
    if isinstance(message, list) and len(message) == 1:
        message = message[0]  # some exports wrap the reply in a one-message list
    if not isinstance(message, dict) or not isinstance(message.get("value"), str):
        raise RowError("wrong_type", field, f"{field!r} should be a {{from, value}} object with text")
    if message.get("from") != "gpt":
        raise RowError(
            "bad_role_sequence", field, f"{field!r} comes from {show(message.get('from'))}, not 'gpt'"
        )
    return message["value"]


def human_turns(record: Record) -> int:
    value = get_value(record, "conversations")
    if not isinstance(value, list):
        raise RowError(
            "wrong_type", "conversations", f"'conversations' should be a list, got {type(value).__name__}"
        )
    return sum(1 for m in value if isinstance(m, dict) and m.get("from") == "human")


def _pair(record: Record) -> tuple[str, str]:
    a, b = read_reply(record, "chosen"), read_reply(record, "rejected")
    check_pair(a, b, "chosen", "rejected")
    return a, b


def convert_single_turn(record: Record, options: SourceOptions) -> Converted:
    if human_turns(record) >= 2:
        return Converted(skipped="multi_turn")
    turns = read_conversation(record["conversations"])
    a, b = _pair(record)
    return Converted(pairs=(PairDraft.single(turns[0][1], a, b, "a"),))


def convert_multi_turn(record: Record, options: SourceOptions) -> Converted:
    if human_turns(record) < 2:
        return Converted(skipped="single_turn")
    turns = read_conversation(record["conversations"])
    a, b = _pair(record)
    flat = flatten_history(turns, options.clip_chars)
    return Converted(pairs=(PairDraft.single(flat.text, a, b, "a", flat.omitted_turns > 0, turns=turns),))


_COLUMNS = ("conversations", "chosen", "rejected")

WILDFEEDBACK_ST = PairAdapter(
    name="wildfeedback_st",
    hub=HUB,
    license="odc-by",
    description="WildFeedback conversations with one human turn: chosen as a, rejected as b.",
    schemas=(_COLUMNS,),
    convert=convert_single_turn,
)

WF_MT = PairAdapter(
    name="wf_mt",
    hub=HUB,
    license="odc-by",
    description="WildFeedback conversations with >= 2 human turns: history flattened and clipped; chosen as a.",
    schemas=(_COLUMNS,),
    convert=convert_multi_turn,
)
