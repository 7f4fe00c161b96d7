"""Community Alignment (English): four candidate responses per turn, one preferred by the annotator.

``community_alignment_en`` takes the first turn of every English record and yields all 6 unordered
candidate pairs (a/b, a/c, a/d, b/c, b/d, c/d, the earlier letter as response_a). The pair's
source_preference is the side holding the annotator's preferred candidate, or None for the 3 pairs
between two non-preferred candidates (the annotation says nothing about those).

``ca_en_mt_p1`` takes turns 2-4 of every English record, one item per present turn, and yields one
representative pair per item: the preferred candidate against one other candidate drawn
deterministically from those that have text and differ from it. The draw is
``int(sha256(f"{seed}:{item_key}:{turn}").hexdigest()[:16], 16) % len(others)`` over the others in
letter order, where ``item_key`` is the record's ``conversation_id`` (or, when absent, the first
and current prompt texts) and ``seed`` is ``SourceOptions.pair_seed`` (42). A draw rather than "the
first other letter" keeps any per-letter bias of the candidates out of the pool, and it depends
only on the item, not on the file order. Every row keeps the known preference. The history is the
earlier turns' prompts and preferred responses, flattened and clipped (see
:mod:`spl_hf.sources.transcript`).

Missing cells (null, NaN, blank or the literal ``EMPTY STRING``) mark turns that did not happen and
candidates that were not produced. Not malformed: other languages, records without later turns
(multi-turn pool): these are counted as filtered. Malformed (quarantined, per candidate or per item
where the rest of the record is still usable): a missing candidate, identical candidates, an
unknown preferred label, a later turn following a missing one, a history turn without its preferred
response, no candidate to pair the preferred one with.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from itertools import combinations

from spl_hf.sources.adapter import Converted, PairAdapter, Record, SourceOptions
from spl_hf.sources.fields import MISSING_MARKERS, RowError, get_optional_text, get_value, is_missing
from spl_hf.sources.io import HubSpec
from spl_hf.sources.rows import Issue, PairDraft, Preference, normalize_text
from spl_hf.sources.transcript import Turn, flatten_history

ORDINALS = ("first", "second", "third", "fourth")
LETTERS = ("a", "b", "c", "d")
# v1.1, the snapshot with root community_alignment.csv (90,256 rows, 30,856 English).
REVISION = "97343c7f6399fcbea430ed0f37c1768281a78d56"
HUB = HubSpec("facebook/community-alignment-dataset", split="train", revision=REVISION)


def turn_columns(ordinal: str) -> tuple[str, ...]:
    return (
        f"{ordinal}_turn_prompt",
        *(f"{ordinal}_turn_response_{x}" for x in LETTERS),
        f"{ordinal}_turn_preferred_response",
    )


@dataclass(frozen=True)
class CATurn:
    number: int  # 1-based
    prompt: str | None
    candidates: dict[str, str | None]
    preferred: str | None  # letter
    preferred_field: str

    def candidate_field(self, letter: str) -> str:
        return f"{ORDINALS[self.number - 1]}_turn_response_{letter}"


def read_turn(record: Record, number: int) -> CATurn:
    ordinal = ORDINALS[number - 1]
    prompt = get_optional_text(record, f"{ordinal}_turn_prompt", MISSING_MARKERS)
    candidates = {
        x: get_optional_text(record, f"{ordinal}_turn_response_{x}", MISSING_MARKERS) for x in LETTERS
    }
    field = f"{ordinal}_turn_preferred_response"
    raw = record.get(field)
    preferred = None
    if not is_missing(raw, MISSING_MARKERS):
        label = str(raw).strip().lower().removeprefix("response_")
        if label not in LETTERS:
            raise RowError("bad_value", field, f"{field!r} should be response_a..response_d, got {raw!r}")
        preferred = label
    return CATurn(number, prompt, candidates, preferred, field)


def english_skip(record: Record) -> str | None:
    lang = get_value(record, "assigned_lang")
    if not isinstance(lang, str):
        raise RowError("wrong_type", "assigned_lang", f"'assigned_lang' should be a string, got {lang!r}")
    code = lang.strip().lower()
    return None if code == "en" else f"language_{code or 'blank'}"


def _preference(x: str, y: str, preferred: str | None) -> Preference | None:
    return "a" if preferred == x else "b" if preferred == y else None


def convert_first_turn(record: Record, options: SourceOptions) -> Converted:
    skip = english_skip(record)
    if skip:
        return Converted(skipped=skip)
    turn = read_turn(record, 1)
    if turn.prompt is None:
        raise RowError("empty_prompt", "first_turn_prompt", "'first_turn_prompt' is empty")
    if turn.preferred is None:
        raise RowError("missing_preference", turn.preferred_field, "no preferred response recorded")
    issues = [
        Issue("empty_response", turn.candidate_field(x), "candidate is missing; its 3 pairs are not formed")
        for x in LETTERS
        if turn.candidates[x] is None
    ]
    pairs = []
    present = [x for x in LETTERS if turn.candidates[x] is not None]
    for x, y in combinations(present, 2):
        a, b = turn.candidates[x], turn.candidates[y]
        assert a is not None and b is not None
        if normalize_text(a) == normalize_text(b):
            issues.append(
                Issue(
                    "identical_responses",
                    turn.candidate_field(y),
                    f"candidates {x} and {y} are the same text",
                )
            )
            continue
        pairs.append(PairDraft.single(turn.prompt, a, b, _preference(x, y, turn.preferred)))
    return Converted(pairs=tuple(pairs), issues=tuple(issues))


def item_key(record: Record, first_prompt: str, turn: CATurn) -> str:
    value = record.get("conversation_id")
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # an integer column read with NaNs elsewhere arrives as float
    if is_missing(value):
        return f"{first_prompt}\x1f{turn.prompt}"
    return str(value)


def representative_pair(turn: CATurn, key: str, seed: int) -> tuple[str, str]:
    """(preferred letter, partner letter): a seeded draw among the other distinct candidates."""
    if turn.preferred is None:
        raise RowError(
            "missing_preference", turn.preferred_field, f"turn {turn.number} has no preferred response"
        )
    chosen = turn.candidates[turn.preferred]
    if chosen is None:
        raise RowError(
            "empty_response", turn.candidate_field(turn.preferred), "the preferred candidate is missing"
        )
    others = [
        x
        for x in LETTERS
        if x != turn.preferred
        and turn.candidates[x] is not None
        and normalize_text(turn.candidates[x] or "") != normalize_text(chosen)
    ]
    if not others:
        raise RowError(
            "no_valid_partner",
            turn.candidate_field(turn.preferred),
            f"turn {turn.number}: no other distinct candidate",
        )
    draw = int(hashlib.sha256(f"{seed}:{key}:{turn.number}".encode()).hexdigest()[:16], 16)
    return turn.preferred, others[draw % len(others)]


def convert_later_turns(record: Record, options: SourceOptions) -> Converted:
    skip = english_skip(record)
    if skip:
        return Converted(skipped=skip)
    turns = [read_turn(record, n) for n in range(1, 5)]
    if all(t.prompt is None for t in turns[1:]):
        return Converted(skipped="no_later_turns")
    first = turns[0].prompt
    if first is None:
        raise RowError(
            "empty_prompt", "first_turn_prompt", "later turns exist but 'first_turn_prompt' is empty"
        )
    pairs: list[PairDraft] = []
    issues: list[Issue] = []
    history: list[Turn] = []
    history_error: Issue | None = None
    gap_after: int | None = None
    for index, turn in enumerate(turns):
        if turn.prompt is None:
            gap_after = gap_after or turn.number
            continue
        ordinal = ORDINALS[turn.number - 1]
        if gap_after is not None:
            issues.append(
                Issue(
                    "turn_gap",
                    f"{ordinal}_turn_prompt",
                    f"turn {turn.number} follows missing turn {gap_after}",
                )
            )
            continue
        if index > 0:
            if history_error is not None:
                detail = f"turn {turn.number} lacks its history: {history_error.detail}"
                issues.append(Issue("missing_context", history_error.field, detail))
            else:
                try:
                    x, y = sorted(representative_pair(turn, item_key(record, first, turn), options.pair_seed))
                except RowError as exc:
                    issues.append(exc.issue)
                else:
                    conversation = [*history, ("user", turn.prompt)]
                    flat = flatten_history(conversation, options.clip_chars)
                    a, b = turn.candidates[x], turn.candidates[y]
                    assert a is not None and b is not None
                    pairs.append(
                        PairDraft.single(
                            flat.text,
                            a,
                            b,
                            _preference(x, y, turn.preferred),
                            flat.omitted_turns > 0,
                            turns=conversation,
                        )
                    )
        # This turn becomes history for the next one: its prompt and the annotator's preferred reply.
        reply = turn.candidates[turn.preferred] if turn.preferred else None
        if reply is None and history_error is None:
            field = turn.candidate_field(turn.preferred) if turn.preferred else turn.preferred_field
            history_error = Issue(
                "missing_context", field, f"turn {turn.number} has no preferred response text"
            )
        history += [("user", turn.prompt), ("assistant", reply or "")]
    return Converted(pairs=tuple(pairs), issues=tuple(issues))


_BASE_COLUMNS = ("assigned_lang",)

COMMUNITY_ALIGNMENT_EN = PairAdapter(
    name="community_alignment_en",
    hub=HUB,
    license="cc-by-4.0",
    description="Community Alignment, English first turns: all 6 unordered pairs of the 4 candidates.",
    schemas=((*_BASE_COLUMNS, *turn_columns("first")),),
    convert=convert_first_turn,
)

CA_EN_MT_P1 = PairAdapter(
    name="ca_en_mt_p1",
    hub=HUB,
    license="cc-by-4.0",
    description="Community Alignment, English turns 2-4: preferred vs a seeded draw among the other distinct "
    "candidates, history flattened and clipped.",
    schemas=((*_BASE_COLUMNS, *(c for o in ORDINALS for c in turn_columns(o))),),
    convert=convert_later_turns,
)
