"""Unified row types shared by every source adapter.

Pair rows are what the judge scores and what the tenet assignment consumes; prompt rows feed
SPL candidate generation and the refusal evaluation. Both carry a ``prompt_id`` computed the same
way, so the same prompt text gets the same id in every pool (see :func:`prompt_id`).
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Literal

from datasets import Features, List, Value

Preference = Literal["a", "b", "tie"]
Category = Literal["benign", "over_refusal_prone", "harmful"]
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
    }
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

_WS = re.compile(r"\s+")


def normalize_text(text: str) -> str:
    """The form of a text that identity checks use.

    NFKC folds compatibility characters (full-width letters, non-breaking spaces) and every run of
    whitespace becomes one space, trimmed at both ends, so copies of a prompt that differ only in
    line endings, indentation or trailing newlines are the same prompt. Case and punctuation are
    kept: they can change what is being asked.
    """
    return _WS.sub(" ", unicodedata.normalize("NFKC", text)).strip()


def prompt_id(prompt: str | Sequence[Message]) -> str:
    """sha256 hex of the normalised prompt.

    A plain string is the single user message ``[{"role": "user", "content": text}]``, so a prompt
    pool row and a single-turn pair with the same text share an id. The hash input is the JSON list
    of ``[role, normalize_text(content)]`` (UTF-8, no ASCII escaping, no spaces).
    """
    messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else prompt
    canon = [[m["role"], normalize_text(m["content"])] for m in messages]
    payload = json.dumps(canon, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class PairDraft:
    """One response pair before it gets its pool position (row_id) and ids."""

    prompt: tuple[tuple[str, str], ...]  # (role, content); tuples keep drafts hashable and immutable
    response_a: str
    response_b: str
    source_preference: Preference | None
    clipped: bool = False  # the prompt is a history transcript with earlier turns omitted

    @classmethod
    def single(
        cls, text: str, a: str, b: str, preference: Preference | None, clipped: bool = False
    ) -> PairDraft:
        return cls((("user", text),), a, b, preference, clipped)

    def messages(self) -> list[Message]:
        return [{"role": role, "content": content} for role, content in self.prompt]


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
