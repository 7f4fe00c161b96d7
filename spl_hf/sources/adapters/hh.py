"""HH-RLHF harmless-base: chosen/rejected are whole ``\\n\\nHuman: … \\n\\nAssistant: …`` transcripts.

Both transcripts are parsed into turns at their ``\\n\\nHuman:``/``\\n\\nAssistant:`` markers and
compared turn by turn (role and normalised text), not character by character. The prompt is the
conversation the two sides share, up to the assistant turn where they part; the responses are each
side's text from there to its end, with surrounding whitespace trimmed (which absorbs the irregular
spacing after ``Assistant:``). The prompt is displayed in its native form (``Human: …`` with the
``\\n\\nAssistant: …`` turns between, leading blank lines trimmed, never clipped) as one user message;
its ``prompt_id`` is that of the turn list, so a one-turn HH prompt has the id of the same question in
any other pool.

A reply may itself contain ``\\n\\nHuman:`` or ``\\n\\nAssistant:`` text (an imagined dialogue, a
reply that runs on into an invented next turn). Then one side parses into more turns than the other;
everything after the parting point belongs to that side's reply. The cut is the last shared point
where both sides have an assistant turn after a human one, accepted when one side ends with that
turn, or when no later human turn is the same on both sides. Malformed (``hh_prefix_mismatch``): the
two sides part at an assistant turn and then go on with the same human turn, i.e. they disagree in
the history rather than in the final reply. Also malformed: a side with no assistant turn, a
transcript that does not open with a human turn, an empty final reply or the same reply on both sides.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from spl_hf.sources.adapter import Converted, PairAdapter, QuickPair, Record, SourceOptions
from spl_hf.sources.fields import RowError, check_pair, get_value
from spl_hf.sources.io import HubSpec
from spl_hf.sources.rows import NO_SAFETY, PairDraft, normalize_text

_MARKER = re.compile(r"\n\n(Human|Assistant):")
_ROLES = {"Human": "user", "Assistant": "assistant"}


class Turn(NamedTuple):
    role: str  # "user" or "assistant"
    marker: int  # where its "\n\nHuman:"/"\n\nAssistant:" marker starts in the body
    start: int  # where its text starts
    end: int  # where its text ends (the next marker or the end)


class Transcript(NamedTuple):
    body: str  # the transcript with its leading whitespace replaced by "\n\n"
    turns: list[Turn]

    def text(self, i: int) -> str:
        return self.body[self.turns[i].start : self.turns[i].end].strip()

    def key(self, i: int) -> tuple[str, str]:
        return self.turns[i].role, normalize_text(self.text(i))


def parse_transcript(transcript: Any, field: str) -> Transcript:
    if not isinstance(transcript, str):
        raise RowError("wrong_type", field, f"{field!r} should be a string, got {type(transcript).__name__}")
    body = "\n\n" + transcript.lstrip()
    markers = list(_MARKER.finditer(body))
    if not any(m.group(1) == "Assistant" for m in markers):
        raise RowError("hh_no_assistant_turn", field, f"{field!r} has no '\\n\\nAssistant:' turn")
    ends = [m.start() for m in markers[1:]] + [len(body)]
    turns = [Turn(_ROLES[m.group(1)], m.start(), m.end(), end) for m, end in zip(markers, ends, strict=True)]
    if markers[0].start() != 0 or turns[0].role != "user":
        raise RowError("bad_role_sequence", field, "transcript does not start with a 'Human:' turn")
    return Transcript(body, turns)


def _shared(a: Transcript, b: Transcript) -> int:
    """How many leading turns the two transcripts share."""
    k = 0
    while k < min(len(a.turns), len(b.turns)) and a.key(k) == b.key(k):
        k += 1
    return k


def _cut(a: Transcript, b: Transcript) -> int | None:
    """The index of the parting assistant turn, or None when the sides disagree in the history."""
    shared = _shared(a, b)
    for j in range(min(shared, len(a.turns) - 1, len(b.turns) - 1), 0, -1):
        if a.turns[j].role != "assistant" or b.turns[j].role != "assistant" or a.turns[j - 1].role != "user":
            continue
        if len(a.turns) == j + 1 or len(b.turns) == j + 1:
            return j
        later = range(j + 1, min(len(a.turns), len(b.turns)))
        if any(a.turns[i].role == "user" and a.key(i) == b.key(i) for i in later):
            return None  # they go on with the same question: the difference is in the history
        return j
    return None


def convert_hh(record: Record, options: SourceOptions) -> Converted:
    chosen = parse_transcript(get_value(record, "chosen"), "chosen")
    rejected = parse_transcript(get_value(record, "rejected"), "rejected")
    j = _cut(chosen, rejected)
    if j is None:
        at = _shared(chosen, rejected)
        raise RowError(
            "hh_prefix_mismatch",
            "rejected",
            f"chosen and rejected differ in the conversation before their final reply (turn {at + 1} differs "
            "and the conversation goes on after it)",
        )
    prompt = chosen.body[2 : chosen.turns[j].marker]
    a = chosen.body[chosen.turns[j].start :].strip()
    b = rejected.body[rejected.turns[j].start :].strip()
    check_pair(a, b, "chosen", "rejected", "the final assistant reply of {field!r} is empty")
    turns = [(chosen.turns[i].role, chosen.text(i)) for i in range(j)]
    return Converted(pairs=(PairDraft.single(prompt, a, b, "a", turns=turns),))


def quick_hh(record: Record, options: SourceOptions) -> QuickPair | None:
    """:func:`convert_hh`'s pair for the common record: the rejected transcript holds the chosen one's
    text up to and including its last marker, an ``Assistant:`` one after a ``Human:`` turn.

    Then both parse into the same turns up to that one, and :func:`_cut` parts them there: every
    earlier turn is shared, and the chosen side ends with that turn (so the per-turn comparison is
    not needed, and what the rejected reply holds after it is its reply). Other records return None.
    """
    chosen, rejected = record.get("chosen"), record.get("rejected")
    if type(chosen) is not str or type(rejected) is not str:
        return None
    body = "\n\n" + chosen.lstrip()
    found = list(_MARKER.finditer(body))
    j = len(found) - 1
    if j < 1 or found[0].start() != 0 or found[0].group(1) != "Human":
        return None
    last = found[j]
    if last.group(1) != "Assistant" or found[j - 1].group(1) != "Human":
        return None
    other = "\n\n" + rejected.lstrip()
    if not other.startswith(body[: last.end()]):
        return None
    ends = [m.start() for m in found[1:]]
    turns = tuple((_ROLES[found[i].group(1)], body[found[i].end() : ends[i]].strip()) for i in range(j))
    reply_a, reply_b = body[last.end() :].strip(), other[last.end() :].strip()
    return body[2 : last.start()], reply_a, reply_b, "a", NO_SAFETY.columns(), turns


HH = PairAdapter(
    name="hh_train",
    hub=HubSpec("Anthropic/hh-rlhf", data_dir="harmless-base", split="train"),
    license="mit",
    description="HH-RLHF harmless-base train: native Human/Assistant transcript as the prompt; "
    "final chosen reply as a, final rejected reply as b.",
    schemas=(("chosen", "rejected"),),
    convert=convert_hh,
    quick=quick_hh,
)
