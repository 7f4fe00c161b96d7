"""The backend interface shared by the transformers and vLLM implementations."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from spl_hf.backends.loading import ModelInfo, check_token_ids
from spl_hf.backends.thinking import (
    PROBE,
    check_chat_template,
    closing_text,
    fingerprint_parts,
    thinking_state,
)
from spl_hf.errors import SplHfError


class InputError(SplHfError):
    """A per-item problem (empty or over-long text, bad message role/content): recorded, not fatal."""


@dataclass(frozen=True)
class LabelScores:
    """Next-token probabilities of the answer labels after one context.

    ``probs`` are full-vocabulary probabilities, so their sum (``mass``) says how much of the model's
    belief the allowed answers hold; ``normalised`` renormalises over the labels only.
    """

    labels: tuple[str, ...]
    probs: tuple[float, ...]
    # Labels a served model's top-k log-probabilities did not include: their probability is not observed
    # (never assumed), so these scores cannot be normalised and the judgement is recorded as not judged.
    unobserved: tuple[str, ...] = ()

    @property
    def mass(self) -> float:
        return float(sum(self.probs))

    @property
    def normalised(self) -> tuple[float, ...]:
        if self.unobserved:
            raise InputError(
                f"label(s) {', '.join(self.unobserved)} not among the server's top log-probabilities: "
                "their probability was not observed"
            )
        m = self.mass
        if m <= 0.0:
            raise SplHfError("label probabilities sum to zero; cannot normalise")
        return tuple(p / m for p in self.probs)


@dataclass(frozen=True)
class Generation:
    text: str
    n_tokens: int
    hit_limit: bool  # stopped by max_new_tokens rather than an end-of-turn token


class LabelError(SplHfError):
    """An answer label that is not one token the model can emit as its answer: refused before scoring."""


class TokenizerText:
    """Text handling both backends share, over a Hugging Face tokenizer in ``self.tokenizer``.

    A backend sets ``engine`` (backend, engine version, dtype) and ``chat_template_kwargs``; both are
    part of :attr:`template_fingerprint`, so every worker's template hash and cache key tell one engine
    configuration's results from another's.
    """

    tokenizer: Any
    engine: dict[str, str]
    chat_template_kwargs: dict[str, Any]
    min_label_mass: float = 0.0
    close_thinking: bool = False  # end the generation prompt with a closed thinking block (thinking.py)

    @property
    def identity(self) -> dict[str, Any]:
        """What besides the weights decides a result: engine, dtype, template arguments, label-mass floor."""
        extra = {"close_thinking": True} if self.close_thinking else {}
        return {
            **self.engine,
            "chat_template_kwargs": dict(self.chat_template_kwargs),
            "min_label_mass": self.min_label_mass,
            **extra,
        }

    @property
    def template_fingerprint(self) -> str:
        blob = json.dumps(
            {
                "chat_template": self.tokenizer.chat_template or "",
                "chat_template_kwargs": self.chat_template_kwargs,
                "engine": self.engine,
                **fingerprint_parts(self.close_thinking, self.tokenizer, self.chat_template_kwargs),
            },
            sort_keys=True,
            separators=(",", ":"),
        )
        return hashlib.sha256(blob.encode()).hexdigest()

    def render_chat(self, messages: Sequence[dict[str, str]], add_generation_prompt: bool = True) -> str:
        text = self.tokenizer.apply_chat_template(
            list(messages),
            tokenize=False,
            add_generation_prompt=add_generation_prompt,
            **self.chat_template_kwargs,
        )
        return text + self._closer() if add_generation_prompt and self.close_thinking else text

    def _closer(self) -> str:
        """The text that closes the thinking block after this template's generation prompt (once per instance)."""
        if "_closer_text" not in self.__dict__:
            probe = self.tokenizer.apply_chat_template(
                PROBE, tokenize=False, add_generation_prompt=True, **self.chat_template_kwargs
            )
            self.__dict__["_closer_text"] = closing_text(thinking_state(self.tokenizer, probe))
        return self.__dict__["_closer_text"]

    def check_template(self, what: str = "") -> None:
        """Refuse a missing or still-thinking chat template (see :mod:`spl_hf.backends.thinking`)."""
        info = getattr(self, "info", None)
        model = info.model_id if info is not None else _tokenizer_name(self)
        check_chat_template(self.tokenizer, model, self.chat_template_kwargs, self.close_thinking, what)

    def encode(self, text: str) -> list[int]:
        # Chat templates already spell out special tokens; adding BOS/EOS again would shift positions.
        return self.tokenizer.encode(text, add_special_tokens=False)

    def count_tokens(self, text: str) -> int:
        return len(self.encode(text))

    def label_id(self, label: str) -> int:
        cache = self.__dict__.setdefault("_label_ids", {})  # per instance, filled on first use
        if label not in cache:
            cache[label] = resolve_label(self, label)
        return cache[label]

    def check_labels(self, labels: Sequence[str]) -> None:
        """Resolve every label now, so a bad one is refused before any scoring."""
        for label in labels:
            self.label_id(label)


class TokenizerProbe(TokenizerText):
    """A tokenizer with a model's identity and template settings, no weights: checks run before they load."""

    def __init__(
        self,
        tokenizer: Any,
        info: ModelInfo,
        chat_template_kwargs: dict[str, Any],
        close_thinking: bool = False,
    ) -> None:
        self.tokenizer, self.info = tokenizer, info
        self.chat_template_kwargs = dict(chat_template_kwargs)
        self.close_thinking = close_thinking
        self.engine = {}


def preflight(
    path: Path | str,
    info: ModelInfo,
    chat_template_kwargs: dict[str, Any],
    close_thinking: bool = False,
    labels: Sequence[str] = (),
) -> Any:
    """The model's tokenizer, checked (chat template, thinking, token ids, answer labels) before any
    weights load."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(path), trust_remote_code=False)
    check_chat_template(tok, info.model_id, chat_template_kwargs, close_thinking)
    check_token_ids(tok, path, info)
    TokenizerProbe(tok, info, chat_template_kwargs, close_thinking).check_labels(labels)
    return tok


def _tokenizer_name(backend: Any) -> str:
    tok = backend.tokenizer
    return f"{type(tok).__name__}({getattr(tok, 'name_or_path', '') or '?'})"


def resolve_label(backend: Any, label: str) -> int:
    """The single token a model emits to answer ``label`` right after the chat's generation prompt.

    The candidates are the tokenizations of the generation prompt followed by the label, with and
    without a leading space (SentencePiece tokenizers mark it '▁A', byte-level BPE 'ĠA' vs 'A'); the
    one the template itself writes for an assistant turn saying the label wins. A reasoning template
    would have the model answer inside a thinking block, so it is refused (see :mod:`.thinking`).
    """
    name = _tokenizer_name(backend)
    backend.check_template(what=f"answer label {label!r}: ")
    prompt = backend.render_chat(PROBE, add_generation_prompt=True)
    base = backend.encode(prompt)
    candidates: dict[str, int] = {}
    for text in (label, " " + label):
        ids = backend.encode(prompt + text)
        single = ids[: len(base)] == base and len(ids) == len(base) + 1
        if single and backend.tokenizer.decode(ids[-1:]).strip() == label:
            candidates[text] = ids[-1]
    if not candidates:
        pieces = backend.tokenizer.convert_ids_to_tokens(backend.encode(prompt + label)[len(base) :])
        info = getattr(backend, "info", None)
        model = f"model {info.model_id}: " if info is not None else ""
        raise LabelError(
            f"{model}answer label {label!r} is not a single token after the generation prompt for {name} "
            f"(it tokenizes as {pieces}); use letters or digits that the tokenizer keeps whole"
        )
    if len(candidates) == 1:
        return next(iter(candidates.values()))
    full = backend.render_chat([*PROBE, {"role": "assistant", "content": label}], add_generation_prompt=False)
    written = full[len(prompt) :] if full.startswith(prompt) else label
    return candidates[" " + label] if written.startswith(" " + label) else candidates[label]


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
