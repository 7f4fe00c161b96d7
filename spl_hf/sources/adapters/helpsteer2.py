"""HelpSteer2, in either of its two Hub layouts.

``data_dir="preference"``: one row per pair (prompt, response_1, response_2, preference_strength in
-3..3; negative means response_1 is better, 0 is a tie) and a ``split`` column; only rows whose
split is ``train`` belong to this pool, the others are counted as filtered. Ties become
source_preference ``"tie"`` (the annotators expressed no direction).

Default layout: one row per response with 0-4 attribute ratings, consecutive rows (1&2, 3&4, …)
answering the same prompt. Consecutive rows with identical prompt text are paired (record_index is
the first row of the pair; fields ending in ``_2`` in quarantine reasons refer to the second row);
a row without such a neighbour is quarantined as ``unpaired_row``. The helpfulness rating decides
source_preference (equal ratings: ``"tie"``).

Multi-turn prompts use ``<extra_id_1>User`` / ``<extra_id_1>Assistant`` separators; when a prompt
splits into a well-formed user/assistant alternation it is flattened into the ``User: …`` transcript
like the other multi-turn pools, otherwise the text is kept as it is.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

from spl_hf.sources.adapter import Converted, Item, PairAdapter, Record, SourceOptions
from spl_hf.sources.fields import RowError, check_pair, get_int, get_text
from spl_hf.sources.io import HubSpec, UnparsableRecord
from spl_hf.sources.rows import Issue, PairDraft, Preference
from spl_hf.sources.transcript import Turn, check_alternation, flatten_history

_SEPARATOR = re.compile(r"\n?<extra_id_1>(User|Assistant)\n?")
PER_RESPONSE = "__helpsteer2_per_response__"


def parse_turns(prompt: str) -> list[Turn] | None:
    """The turns of a multi-turn HelpSteer2 prompt, or None when it is single-turn or irregular."""
    parts = _SEPARATOR.split(prompt)
    if len(parts) == 1:
        return None
    turns: list[Turn] = [("user", parts[0])]
    for label, content in zip(parts[1::2], parts[2::2], strict=True):
        turns.append(("user" if label == "User" else "assistant", content))
    try:
        check_alternation(turns)
    except ValueError:
        return None
    if any(not content.strip() for _, content in turns):
        return None
    return turns


def pair_consecutive(records: Sequence[Record | UnparsableRecord]) -> Iterator[tuple[int, Item]]:
    """Preference-layout rows pass through; per-response rows are merged with their neighbour."""
    i = 0
    while i < len(records):
        record = records[i]
        if isinstance(record, UnparsableRecord) or "response_1" in record or "response" not in record:
            yield i, record
            i += 1
            continue
        partner = records[i + 1] if i + 1 < len(records) else None
        prompt = record.get("prompt")
        if isinstance(partner, dict) and isinstance(prompt, str) and partner.get("prompt") == prompt:
            yield (
                i,
                {
                    PER_RESPONSE: i + 1,
                    "prompt": prompt,
                    "response_1": record.get("response"),
                    "response_2": partner.get("response"),
                    "helpfulness_1": record.get("helpfulness"),
                    "helpfulness_2": partner.get("helpfulness"),
                },
            )
            i += 2
        else:
            yield i, Issue("unpaired_row", "prompt", "no neighbouring row answers the same prompt")
            i += 1


def _preference(record: Record) -> Preference:
    if PER_RESPONSE in record:
        h1, h2 = get_int(record, "helpfulness_1"), get_int(record, "helpfulness_2")
        return "a" if h1 > h2 else "b" if h2 > h1 else "tie"
    strength = get_int(record, "preference_strength")
    if not -3 <= strength <= 3:
        raise RowError(
            "bad_value", "preference_strength", f"preference_strength should be in -3..3, got {strength}"
        )
    return "a" if strength < 0 else "b" if strength > 0 else "tie"


def convert_helpsteer2(record: Record, options: SourceOptions) -> Converted:
    split: Any = record.get("split")
    if PER_RESPONSE not in record and split is not None and split != "train":
        if not isinstance(split, str):
            raise RowError("wrong_type", "split", f"'split' should be a string, got {type(split).__name__}")
        return Converted(skipped=f"split_{split[:40]}")
    prompt = get_text(record, "prompt", empty_reason="empty_prompt")
    a = get_text(record, "response_1", empty_reason="empty_response")
    b = get_text(record, "response_2", empty_reason="empty_response")
    check_pair(a, b, "response_1", "response_2")
    preference = _preference(record)
    turns = parse_turns(prompt)
    if turns is None:
        return Converted(pairs=(PairDraft.single(prompt, a, b, preference),))
    flat = flatten_history(turns, options.clip_chars)
    return Converted(
        pairs=(PairDraft.single(flat.text, a, b, preference, flat.omitted_turns > 0, turns=turns),)
    )


HELPSTEER2 = PairAdapter(
    name="helpsteer2_train",
    hub=HubSpec("nvidia/HelpSteer2", data_dir="preference", split="train"),
    license="cc-by-4.0",
    description="HelpSteer2 train: preference layout (response_1/response_2, preference_strength, ties as 'tie') "
    "or the default per-response layout paired by consecutive rows.",
    schemas=(
        ("prompt", "response_1", "response_2", "preference_strength"),
        ("prompt", "response", "helpfulness"),
    ),
    convert=convert_helpsteer2,
    group=pair_consecutive,
)
