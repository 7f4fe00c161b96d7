"""Any preference file: TRL's preference formats, or any table through a column mapping.

TRL's preference type (``docs/source/dataset_formats.md``), in both formats:

- standard, explicit prompt: ``{"prompt": "The sky is", "chosen": " blue.", "rejected": " green."}``;
- standard, implicit prompt: ``{"chosen": "The sky is blue.", "rejected": "The sky is green."}``: the
  prompt is the longest common prefix of the two texts, a space before the point where they part
  going with the completions (``trl.extract_prompt``'s rule);
- conversational, explicit prompt: ``prompt`` a list of ``{"role", "content"}`` messages, ``chosen`` and
  ``rejected`` each one assistant message (a list of one, as TRL writes them, or a plain string);
- conversational, implicit prompt: ``chosen`` and ``rejected`` whole conversations; the prompt is the
  messages they share from the start, and each must then hold exactly one assistant message more.

Any other file maps its columns onto these names (:mod:`spl_hf.sources.mapping`). A file without a
preference of its own names its two responses ``response_a`` and ``response_b`` instead of
``chosen``/``rejected``: its pairs carry no ``source_preference`` (agreement figures then have no
pool label to compare with).

Rows: chosen as a, rejected as b, ``source_preference`` ``"a"``. The prompt is shown as the source's
messages: leading system messages as they are, then one user message; an earlier conversation
(alternating user and assistant turns, ending on the user turn the responses answer) is flattened as
in the other multi-turn pools (``User: …`` lines, clipped to ``clip_chars``), with ``prompt_id`` of
the turns. Reasons: ``missing_field``, ``wrong_type``, ``empty_prompt``, ``empty_response``,
``identical_responses``, ``bad_role_sequence`` (a role other than system/user/assistant, turns that
do not alternate, a response that is not one assistant message).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from spl_hf.sources.adapter import Converted, PairAdapter, Record, SourceOptions
from spl_hf.sources.fields import RowError, check_pair, get_value, is_missing, show
from spl_hf.sources.io import HubSpec
from spl_hf.sources.rows import PairDraft, Preference
from spl_hf.sources.transcript import Turn, check_alternation, flatten_history

READS = ("prompt", "chosen", "rejected", "response_a", "response_b")
ROLES = frozenset({"system", "user", "assistant"})
NAME = "preference"


def _messages(value: Any, field: str) -> list[Turn]:
    if not isinstance(value, list) or not value:
        raise RowError("wrong_type", field, f"{field!r} should be a string or a non-empty list of messages")
    turns = []
    for i, message in enumerate(value):
        if not isinstance(message, dict):
            raise RowError("wrong_type", field, f"{field!r} message {i} is {show(message)}, not a message")
        role, content = message.get("role"), message.get("content")
        if role not in ROLES:
            raise RowError("bad_role_sequence", field, f"{field!r} message {i} has role {show(role)}")
        if not isinstance(content, str):
            raise RowError("wrong_type", field, f"{field!r} message {i} content is {show(content)}, not text")
        turns.append((role, content))
    return turns


def _reply(turns: Sequence[Turn], field: str) -> str:
    """The one assistant message a response must be."""
    if len(turns) != 1 or turns[0][0] != "assistant":
        roles = [r for r, _ in turns] or "nothing"
        raise RowError(
            "bad_role_sequence",
            field,
            f"{field!r} should be one assistant message after the prompt, got {roles}",
        )
    return turns[0][1]


def _response(value: Any, field: str) -> str:
    if isinstance(value, str):
        return value
    return _reply(_messages(value, field), field)


def _shared_text(a: str, b: str) -> int:
    """Where two texts part (trl.extract_prompt: a space before the parting point goes with the completions)."""
    k = 0
    while k < min(len(a), len(b)) and a[k] == b[k]:
        k += 1
    if 0 < k < min(len(a), len(b)) and a[k - 1] == " ":
        k -= 1
    return k


def _implicit(a: Any, b: Any, fa: str, fb: str) -> tuple[list[Turn], str, str]:
    """The prompt the two sides share and each side's reply (TRL's implicit-prompt formats)."""
    if isinstance(a, str) and isinstance(b, str):
        k = _shared_text(a, b)
        return [("user", a[:k])], a[k:], b[k:]
    if isinstance(a, str) or isinstance(b, str):
        raise RowError("wrong_type", fb, f"{fa!r} and {fb!r} should both be texts or both message lists")
    ta, tb = _messages(a, fa), _messages(b, fb)
    k = 0
    while k < min(len(ta), len(tb)) and ta[k] == tb[k]:
        k += 1
    return ta[:k], _reply(ta[k:], fa), _reply(tb[k:], fb)


def _draft(
    turns: list[Turn], a: str, b: str, preference: Preference | None, options: SourceOptions
) -> PairDraft:
    n_system = next((i for i, t in enumerate(turns) if t[0] != "system"), len(turns))
    system, rest = turns[:n_system], turns[n_system:]
    if not rest or is_missing(rest[-1][1]):
        raise RowError("empty_prompt", "prompt", "the prompt has no user message with text")
    try:
        check_alternation(rest)
    except ValueError as exc:
        raise RowError("bad_role_sequence", "prompt", f"the prompt's turns: {exc}") from None
    if len(rest) == 1:
        return PairDraft((*system, rest[0]), a, b, preference, turns=tuple(turns) if system else None)
    flat = flatten_history(rest, options.clip_chars)
    return PairDraft((*system, ("user", flat.text)), a, b, preference, flat.omitted_turns > 0, tuple(turns))


def convert_preference(record: Record, options: SourceOptions) -> Converted:
    labelled = "chosen" in record or "rejected" in record or "response_a" not in record
    fa, fb = ("chosen", "rejected") if labelled else ("response_a", "response_b")
    va, vb = get_value(record, fa), get_value(record, fb)
    if "prompt" in record:
        prompt = record["prompt"]
        if is_missing(prompt):
            raise RowError("empty_prompt", "prompt", "'prompt' is empty or null")
        turns = [("user", prompt)] if isinstance(prompt, str) else _messages(prompt, "prompt")
        a, b = _response(va, fa), _response(vb, fb)
    else:
        turns, a, b = _implicit(va, vb, fa, fb)
    check_pair(a, b, fa, fb)
    return Converted(pairs=(_draft(turns, a, b, "a" if labelled else None, options),))


def preference_adapter(name: str = NAME, license: str = "unknown", description: str = "") -> PairAdapter:
    """The adapter under the source name the user chose (it names rows, splits and card lines)."""
    return PairAdapter(
        name=name,
        hub=HubSpec(name, split="train"),
        license=license,
        description=description
        or "A preference file in TRL's format (prompt/chosen/rejected, standard or conversational, explicit "
        "or implicit prompt): chosen as a, rejected as b.",
        schemas=(("chosen", "rejected"), ("response_a", "response_b")),
        convert=convert_preference,
    )


PREFERENCE = preference_adapter()
