"""The backend interface shared by the transformers and vLLM implementations."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from spl_hf.backends.loading import ModelInfo


class InputError(ValueError):
    """A per-item problem (empty or over-long text, bad message role/content): recorded, not fatal."""


@dataclass(frozen=True)
class LabelScores:
    """Next-token probabilities of the answer labels after one context.

    ``probs`` are full-vocabulary probabilities, so their sum (``mass``) says how much of the model's
    belief the allowed answers hold; ``normalised`` renormalises over the labels only.
    """

    labels: tuple[str, ...]
    probs: tuple[float, ...]

    @property
    def mass(self) -> float:
        return float(sum(self.probs))

    @property
    def normalised(self) -> tuple[float, ...]:
        m = self.mass
        if m <= 0.0:
            raise ValueError("label probabilities sum to zero; cannot normalise")
        return tuple(p / m for p in self.probs)


@dataclass(frozen=True)
class Generation:
    text: str
    n_tokens: int
    hit_limit: bool  # stopped by max_new_tokens rather than an end-of-turn token


class TokenizerText:
    """Text handling both backends share, over a Hugging Face tokenizer in ``self.tokenizer``."""

    tokenizer: Any

    @property
    def template_fingerprint(self) -> str:
        return hashlib.sha256((self.tokenizer.chat_template or "").encode()).hexdigest()

    def render_chat(self, messages: Sequence[dict[str, str]], add_generation_prompt: bool = True) -> str:
        return self.tokenizer.apply_chat_template(
            list(messages), tokenize=False, add_generation_prompt=add_generation_prompt
        )

    def encode(self, text: str) -> list[int]:
        # Chat templates already spell out special tokens; adding BOS/EOS again would shift positions.
        return self.tokenizer.encode(text, add_special_tokens=False)

    def count_tokens(self, text: str) -> int:
        return len(self.encode(text))

    def label_id(self, label: str) -> int:
        cache = self.__dict__.setdefault("_label_ids", {})  # per instance, filled on first use
        if label not in cache:
            ids = self.encode(label)
            if len(ids) != 1:
                raise ValueError(
                    f"answer label {label!r} is {len(ids)} tokens for this tokenizer; labels must be single "
                    "tokens (use letters or digits as option keys)"
                )
            cache[label] = ids[0]
        return cache[label]


@runtime_checkable
class Backend(Protocol):
    """What the judge, labeler and generator need from a language model."""

    info: ModelInfo

    @property
    def template_fingerprint(self) -> str:
        """Hash of the tokenizer's chat template (part of every prompt-template hash)."""
        ...

    def render_chat(self, messages: Sequence[dict[str, str]], add_generation_prompt: bool = True) -> str: ...

    def count_tokens(self, text: str) -> int: ...

    def next_token_scores(
        self, prefix: str, suffixes: Sequence[str], labels: Sequence[Sequence[str]]
    ) -> list[LabelScores]:
        """Label probabilities after ``prefix + suffix`` for each suffix, sharing the prefix's work."""
        ...

    def next_token_scores_full(self, text: str, labels: Sequence[str]) -> LabelScores:
        """The same quantity computed with one independent pass (the reference for prefix sharing)."""
        ...

    def generate(
        self, text: str, max_new_tokens: int, seed: int = 0, do_sample: bool = False, temperature: float = 1.0
    ) -> Generation: ...
