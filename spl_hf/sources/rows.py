"""Unified row types shared by every source adapter.

Pair rows are what the judge scores and what the tenet assignment consumes; prompt rows feed
SPL candidate generation and the refusal evaluation. Both carry a ``prompt_id`` computed the same
way, so the same prompt text gets the same id in every pool (see :func:`prompt_id`).
"""

from __future__ import annotations

import functools
import hashlib
import json
import unicodedata
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Literal

from datasets import Features, List, Value

# The string encoder json.dumps(ensure_ascii=False) uses (the C one where available).
_json_string = json.encoder.encode_basestring

Preference = Literal["a", "b", "tie"]
Category = Literal["benign", "over_refusal_prone", "harmful", "mixed", "unknown"]
# What a recipe or `sources read --category` may declare for a source of its own ("unknown" is what a
# renamed or generic source without a declaration gets: never "benign" by default).
DECLARED_CATEGORIES = ("benign", "over_refusal_prone", "harmful", "mixed")
Message = dict[str, str]

MESSAGE_FEATURE = {"role": Value("string"), "content": Value("string")}

PAIR_FEATURES = Features(
    {
        "pair_id": Value("string"),
        "prompt_id": Value("string"),
        "source": Value("string"),
        "row_id": Value("int64"),
        "record_index": Value("int64"),
        "prompt": List(MESSAGE_FEATURE),
        "response_a": Value("string"),
        "response_b": Value("string"),
        "source_preference": Value("string"),
        # Source safety labels of each response (PKU-SafeRLHF is_response_{0,1}_safe and
        # response_{0,1}_severity_level, 0 safe .. 3 severe); null for pools that have none.
        "response_a_safe": Value("bool"),
        "response_b_safe": Value("bool"),
        "response_a_severity": Value("int64"),
        "response_b_severity": Value("int64"),
    }
)
SAFETY_COLUMNS: tuple[str, ...] = (
    "response_a_safe",
    "response_b_safe",
    "response_a_severity",
    "response_b_severity",
)

PROMPT_FEATURES = Features(
    {
        "prompt_id": Value("string"),
        "source": Value("string"),
        "row_id": Value("int64"),
        "record_index": Value("int64"),
        "prompt": Value("string"),
        "category": Value("string"),
        "source_label": Value("string"),
        "license": Value("string"),
    }
)

QUARANTINE_FEATURES = Features(
    {
        "source": Value("string"),
        "record_index": Value("int64"),
        "field": Value("string"),
        "reason": Value("string"),
        "detail": Value("string"),
    }
)

SOURCE_PREFERENCES: tuple[str, ...] = ("a", "b", "tie")
CATEGORIES: tuple[str, ...] = ("benign", "over_refusal_prone", "harmful")


def normalize_text(text: str) -> str:
    """The form of a text that identity checks use.

    NFKC folds compatibility characters (full-width letters, non-breaking spaces) and every run of
    whitespace becomes one space, trimmed at both ends, so copies of a prompt that differ only in
    line endings, indentation or trailing newlines are the same prompt. Case and punctuation are
    kept: they can change what is being asked.
    """
    if type(text) is not str:
        return _normalize(text)
    return text if _is_normal(text) else _normalize_recent(text)


def _is_normal(text: str) -> bool:
    """Whether a text is in normal form by a quick test: ASCII (which NFKC leaves alone) whose only
    whitespace is single inner spaces (an ASCII whitespace character other than the space is a
    control character, which isprintable refuses). Most texts are; the tests run in C."""
    return text.isascii() and text.isprintable() and "  " not in text and text[:1] != " " and text[-1:] != " "


def _normalize(text: str) -> str:
    if _is_normal(text):
        return text
    # str.split() splits on exactly the characters `\s` matches (str.isspace), ten times faster.
    return " ".join(unicodedata.normalize("NFKC", text).split())


# A pool normalises each text several times (the identical-responses check, the prompt id, the
# duplicate key; HH-RLHF's turn comparison and then its prompt id), always within one record, so a
# few recent results spare most of the work.
_normalize_recent = functools.lru_cache(maxsize=32)(_normalize)


def prompt_id(prompt: str | Sequence[Message] | Sequence[tuple[str, str]]) -> str:
    """sha256 hex of the normalised conversation.

    The input is the canonical turn list, ``(role, text)`` pairs or ``{"role", "content"}``
    messages; a plain string is the single user turn ``[("user", text)]``. Pools that display a
    conversation as one transcript message (HH-RLHF's ``Human: …`` form, the ``User: …`` flattening
    of multi-turn pools, clipped or not) hash the turns the transcript shows, not the transcript, so
    the same question gets the same id in every pool and whatever the clipping budget. The hash
    input is the JSON list of ``[role, normalize_text(text)]`` (UTF-8, no ASCII escaping, no spaces).
    """
    turns = [("user", prompt)] if isinstance(prompt, str) else prompt
    canon = [
        [t["role"], normalize_text(t["content"])] if isinstance(t, dict) else [t[0], normalize_text(t[1])]
        for t in turns
    ]
    if all(type(role) is str for role, _ in canon):
        # The text json.dumps writes for a list of string pairs, without its per-call encoder set-up
        # (which costs more than the encoding); other roles (None, numbers) take json.dumps itself.
        payload = "[" + ",".join(f"[{_json_string(role)},{_json_string(text)}]" for role, text in canon) + "]"
    else:
        payload = json.dumps(canon, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


Turns = tuple[tuple[str, str], ...]  # (role, content); tuples keep drafts hashable and immutable


@dataclass(frozen=True)
class Safety:
    """A source's safety labels of the two responses (None where it gives none)."""

    a_safe: bool | None = None
    b_safe: bool | None = None
    a_severity: int | None = None
    b_severity: int | None = None

    def columns(self) -> tuple[bool | None, bool | None, int | None, int | None]:
        return (self.a_safe, self.b_safe, self.a_severity, self.b_severity)


NO_SAFETY = Safety()


@dataclass(frozen=True)
class PairDraft:
    """One response pair before it gets its pool position (row_id) and ids."""

    prompt: Turns  # the prompt as displayed and judged
    response_a: str
    response_b: str
    source_preference: Preference | None
    clipped: bool = False  # the prompt is a history transcript with earlier turns omitted
    turns: Turns | None = None  # the conversation the prompt shows, when it is a transcript of it
    safety: Safety = NO_SAFETY

    @classmethod
    def single(
        cls,
        text: str,
        a: str,
        b: str,
        preference: Preference | None,
        clipped: bool = False,
        turns: Sequence[tuple[str, str]] | None = None,
        safety: Safety = NO_SAFETY,
    ) -> PairDraft:
        return cls((("user", text),), a, b, preference, clipped, tuple(turns) if turns else None, safety)

    def messages(self) -> list[Message]:
        return [{"role": role, "content": content} for role, content in self.prompt]

    def identity(self) -> Turns:
        """The canonical turn list that :func:`prompt_id` hashes."""
        return self.turns or self.prompt


@dataclass(frozen=True)
class PromptDraft:
    prompt: str
    category: Category
    source_label: str | None


@dataclass(frozen=True)
class Issue:
    """Why (part of) a record could not become a row. ``reason`` is a stable code for counting."""

    reason: str
    field: str | None
    detail: str


@dataclass(frozen=True)
class QuarantineRecord:
    source: str
    record_index: int
    field: str | None
    reason: str
    detail: str

    def to_dict(self) -> dict:
        return asdict(self)

    def __str__(self) -> str:
        where = f" field {self.field!r}" if self.field else ""
        return f"{self.source} record {self.record_index}{where}: {self.reason}: {self.detail}"
