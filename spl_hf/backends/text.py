"""Validation and plain-text rendering of conversations shown to a judge or labeler."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from spl_hf.backends.base import InputError
from spl_hf.errors import SplHfError

ROLES = ("system", "user", "assistant")
_ROLE_NAMES = {"system": "System", "user": "User", "assistant": "Assistant"}
SENTINEL = "\x00SPLHF_SPLIT\x00"
# A user message that already is a transcript: the multi-turn pools' ``User: …\nAssistant: …`` flattening
# (clipped ones start with the omission marker of spl_hf.sources.transcript, repeated here so this module
# does not import the sources package) and HH-RLHF's native ``Human: …`` form. Such a message is shown
# as it is; prefixing it with ``User:`` would stack two speaker labels (``User: Human: …``).
OMITTED_MARKER = "[…earlier turns omitted…]"
TRANSCRIPT_STARTS = ("User:", "Human:", OMITTED_MARKER)


def validate_messages(messages: Any, field: str = "prompt") -> list[dict[str, str]]:
    """A list of {role, content} with known roles and non-empty string content, or :class:`InputError`."""
    if hasattr(messages, "tolist"):  # numpy arrays from parquet readers
        messages = messages.tolist()
    if not isinstance(messages, (list, tuple)) or not messages:
        raise InputError(f"{field}: expected a non-empty list of {{role, content}} messages")
    out = []
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            raise InputError(f"{field}[{i}]: expected a {{role, content}} mapping, got {type(m).__name__}")
        role, content = m.get("role"), m.get("content")
        if role not in ROLES:
            raise InputError(f"{field}[{i}].role: {role!r} is not one of {', '.join(ROLES)}")
        if not isinstance(content, str):
            raise InputError(f"{field}[{i}].content: expected a string, got {type(content).__name__}")
        if not content.strip():
            raise InputError(f"{field}[{i}].content: empty")
        out.append({"role": role, "content": content})
    return out


def validate_text(value: Any, field: str) -> str:
    if not isinstance(value, str):
        raise InputError(f"{field}: expected a string, got {type(value).__name__}")
    if not value.strip():
        raise InputError(f"{field}: empty")
    return value


def is_transcript(message: dict[str, str]) -> bool:
    """True for a user message whose text is itself a speaker-labelled transcript (see TRANSCRIPT_STARTS)."""
    return message["role"] == "user" and message["content"].lstrip().startswith(TRANSCRIPT_STARTS)


def transcript(messages: Sequence[dict[str, str]]) -> str:
    """``Role: content`` blocks, each speaker label once; the text is stripped so a following marker
    starts on a clean boundary."""
    return "\n\n".join(
        m["content"].strip() if is_transcript(m) else f"{_ROLE_NAMES[m['role']]}: {m['content'].strip()}"
        for m in messages
    )


def split_template(render: Any, head: str) -> tuple[str, str]:
    """Render a one-turn chat whose user content is ``head`` + SENTINEL; return (before, after) it.

    ``render`` is the backend's ``render_chat``. The question text goes between the two halves, so
    the shared prefix ends exactly where the per-question suffix begins.
    """
    text = render([{"role": "user", "content": head + SENTINEL}], add_generation_prompt=True)
    before, sep, after = text.partition(SENTINEL)
    if not sep or SENTINEL in after:
        raise SplHfError("chat template did not keep the user content intact")
    return before, after


def content_key(kind: str, *parts: Any) -> str:
    """Stable key of JSON-serialisable parts (dict keys sorted, no whitespace): a worker's item id."""
    blob = json.dumps([kind, *parts], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()


def template_hash(fingerprint: str, **parts: Any) -> str:
    blob = json.dumps({"chat_template": fingerprint, **parts}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()
