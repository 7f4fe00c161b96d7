"""Flattening a conversation history into the one user message that multi-turn pools are judged in.

The transcript is ``User: …\\nAssistant: …\\nUser: …``: one line-prefixed block per message, in
order, ending on the user turn that the candidate responses answer.

Clipping keeps the transcript within ``clip_chars`` characters by dropping whole exchanges (a user
message together with the assistant reply to it) from the front, so a clipped transcript still
starts with a ``User:`` turn, and prefixing :data:`OMITTED_MARKER` on its own line. The marker and
its newline count toward the budget. The final user turn is never cut: when it alone exceeds the
budget the transcript is that turn, marked, and over budget, because the candidate responses are
answers to it and a judge cannot score them without it. ``clip_chars=None`` disables clipping.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from spl_hf.errors import SplHfError

OMITTED_MARKER = "[…earlier turns omitted…]"
# About 1.5k tokens of English; the budget the public per-tenet pools were built with, which leaves a
# judge input room for the tenet text and both candidate responses.
DEFAULT_CLIP_CHARS = 6000

ROLE_LABELS = {"user": "User", "assistant": "Assistant"}

Turn = tuple[str, str]  # (role, content), role "user" or "assistant"


class Flattened(NamedTuple):
    text: str
    omitted_turns: int  # messages dropped from the front (0 when not clipped)


def check_alternation(turns: Sequence[Turn]) -> None:
    """Raise ValueError unless turns alternate user/assistant, starting and ending with user."""
    if not turns:
        raise SplHfError("conversation has no turns")
    for i, (role, _) in enumerate(turns):
        expected = "user" if i % 2 == 0 else "assistant"
        if role != expected:
            raise SplHfError(f"turn {i} is {role!r}, expected {expected!r}")
    if turns[-1][0] != "user":
        raise SplHfError("conversation does not end with a user turn")


def render_turns(turns: Sequence[Turn]) -> str:
    return "\n".join(f"{ROLE_LABELS[role]}: {content.strip()}" for role, content in turns)


def flatten_history(turns: Sequence[Turn], clip_chars: int | None = DEFAULT_CLIP_CHARS) -> Flattened:
    check_alternation(turns)
    if clip_chars is not None and clip_chars <= 0:
        raise SplHfError(f"clip_chars must be a positive number of characters, got {clip_chars}")
    full = render_turns(turns)
    if clip_chars is None or len(full) <= clip_chars or len(turns) == 1:
        return Flattened(full, 0)
    user_starts = range(2, len(turns), 2)  # exchange boundaries after the first
    for start in user_starts:
        text = f"{OMITTED_MARKER}\n{render_turns(turns[start:])}"
        if len(text) <= clip_chars:
            return Flattened(text, start)
    last = len(turns) - 1
    return Flattened(f"{OMITTED_MARKER}\n{render_turns(turns[last:])}", last)
