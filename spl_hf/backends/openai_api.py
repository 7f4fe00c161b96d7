"""``backend: openai``: the judge, labeler, verdict judge and generator behind an OpenAI-compatible server
(vLLM, SGLang, TGI, a hosted API).

Labels are read from the first answer token's ``top_logprobs``. A label missing from the returned top-k
has no observed probability: that judgement is recorded as not judged, never scored with a guessed value.
With only ``base_url`` and ``model`` the chat endpoint renders the template on the server, one prompt per
request; with ``tokenizer`` the prompts are rendered and tokenized here and go to the completions
endpoint as token ids, many per request. Requests run ``concurrency`` at a time; 429 and 5xx answers are
retried with backoff that honours ``Retry-After``, and so are timeouts and truncated or malformed replies.
The API key is read from ``OPENAI_API_KEY`` only, sent as a header, and never recorded.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from spl_hf.backends.base import Generation, InputError, LabelScores, TokenizerText
from spl_hf.backends.loading import ModelInfo
from spl_hf.backends.served import ServedClient, ServerError
from spl_hf.errors import SplHfError

PROMPTS_PER_REQUEST = 32  # completions endpoint: token-id prompts sent together
# Chat rendering when the server applies the template: messages are kept in the text with these marks
# (control characters that validated message text never needs) so the judge's prefix/suffix split works.
ROLE, TEXT = "\x01", "\x02"


class OpenAIBackend(TokenizerText):
    """A model behind an OpenAI-compatible HTTP API, behind the :class:`~spl_hf.backends.base.Backend` interface."""

    def __init__(
        self,
        model: str | None = None,
        base_url: str | None = None,
        tokenizer: str | None = None,
        concurrency: int = 8,
        request_timeout: float = 120.0,
        retries: int = 5,
        top_logprobs: int = 20,
        max_length: int | None = None,
        chat_template_kwargs: dict[str, Any] | None = None,
        min_label_mass: float = 0.0,
        close_thinking: bool = False,
        **_ignored: Any,
    ) -> None:
        if not base_url:
            raise InputError("backend openai: set base_url (e.g. http://127.0.0.1:8000/v1)")
        self.client = ServedClient(base_url, request_timeout, retries)
        self.served_model = self.client.model_id(model)
        self.concurrency = max(1, int(concurrency))
        self.top_logprobs = int(top_logprobs)
        self.chat_template_kwargs = dict(chat_template_kwargs or {})
        self.min_label_mass = float(min_label_mass)
        self.close_thinking = bool(close_thinking)
        self.max_length = max_length
        self.tokenizer = _load_tokenizer(tokenizer) if tokenizer else None
        endpoint = "completions" if self.tokenizer is not None else "chat"
        self.engine = {
            "backend": "openai",
            "engine": f"openai-compatible {self.client.host}",  # the host only: never the key or the path
            "dtype": "server",
            "endpoint": endpoint,
            "sampling": f"temperature 0, max_tokens 1, top_logprobs {self.top_logprobs}",
        }
        self.info = ModelInfo(
            self.served_model, f"served:{self.client.host}/{self.served_model}", self.client.host
        )
        self.boundary_fallbacks = 0
        self.forward_calls = 0  # HTTP requests that returned a usable answer

    # -- text ---------------------------------------------------------------------------------------
    @property
    def template_fingerprint(self) -> str:
        if self.tokenizer is not None:
            return super().template_fingerprint
        import hashlib
        import json

        # The template is the server's: its model id, host and our template arguments stand for it.
        blob = json.dumps(
            {"served": self.served_model, "kwargs": self.chat_template_kwargs, "engine": self.engine},
            sort_keys=True,
        )
        return hashlib.sha256(blob.encode()).hexdigest()

    def render_chat(self, messages: Sequence[dict[str, str]], add_generation_prompt: bool = True) -> str:
        if self.tokenizer is not None:
            return super().render_chat(messages, add_generation_prompt)
        for m in messages:
            if ROLE in m["content"] or TEXT in m["content"]:
                raise InputError("message content holds a control character (\\x01 or \\x02)")
        return "".join(f"{ROLE}{m['role']}{TEXT}{m['content']}" for m in messages)

    def count_tokens(self, text: str) -> int:
        # Without a tokenizer, bytes bound the token count from above (used only against max_length).
        return super().count_tokens(text) if self.tokenizer is not None else len(text.encode())

    def check_labels(self, labels: Sequence[str]) -> None:
        if self.tokenizer is not None:
            super().check_labels(labels)
        elif any(not lab or lab != lab.strip() for lab in labels):
            raise InputError(f"answer labels must be non-empty words without spaces, got {list(labels)}")

    def _label_text(self, label: str) -> str:
        """The token text the server reports for ``label`` in its top log-probabilities."""
        if self.tokenizer is None:
            return label
        return self.tokenizer.decode([self.label_id(label)])

    # -- scoring ------------------------------------------------------------------------------------
    def next_token_scores(
        self, prefix: str, suffixes: Sequence[str], labels: Sequence[Sequence[str]]
    ) -> list[LabelScores]:
        return self._score([prefix + s for s in suffixes], labels)

    def next_token_scores_many(
        self, jobs: Sequence[tuple[str, Sequence[str], Sequence[Sequence[str]]]]
    ) -> list[list[LabelScores]]:
        flat = self._score(
            [prefix + s for prefix, suffixes, _ in jobs for s in suffixes],
            [lab for _, _, labs in jobs for lab in labs],
        )
        out, start = [], 0
        for _, suffixes, _ in jobs:
            out.append(flat[start : start + len(suffixes)])
            start += len(suffixes)
        return out

    def next_token_scores_full(self, text: str, labels: Sequence[str]) -> LabelScores:
        return self._score([text], [labels])[0]

    def _score(self, texts: list[str], labels: Sequence[Sequence[str]]) -> list[LabelScores]:
        if self.tokenizer is not None:
            ids = [self._ids(t) for t in texts]
            batches = [
                list(range(i, min(i + PROMPTS_PER_REQUEST, len(ids))))
                for i in range(0, len(ids), PROMPTS_PER_REQUEST)
            ]
            tops: list[dict[str, float]] = [{} for _ in texts]

            def run(rows: list[int]) -> None:
                for r, top in zip(rows, self._complete_top([ids[r] for r in rows]), strict=True):
                    tops[r] = top

            self._parallel_map(run, batches)
        else:
            tops = self._parallel_map(lambda t: self._chat_top(_messages(t)), texts)
        return [self._label_scores(top, labs) for top, labs in zip(tops, labels, strict=True)]

    def _ids(self, text: str) -> list[int]:
        ids = self.encode(text)
        if not ids:
            raise InputError("empty input")
        if self.max_length is not None and len(ids) + 1 > self.max_length:
            raise InputError(f"input is {len(ids)} tokens, longer than the model context ({self.max_length})")
        return ids

    def _label_scores(self, top: dict[str, float], labels: Sequence[str]) -> LabelScores:
        probs, missing = [], []
        for lab in labels:
            lp = top.get(self._label_text(lab))
            if lp is None:
                missing.append(lab)
                probs.append(0.0)
            else:
                probs.append(math.exp(lp))
        return LabelScores(tuple(labels), tuple(probs), tuple(missing))

    def _complete_top(self, prompts: list[list[int]]) -> list[dict[str, float]]:
        body = {
            "model": self.served_model,
            "prompt": prompts,
            "max_tokens": 1,
            "temperature": 0.0,
            "logprobs": self.top_logprobs,
        }
        reply = self.client.post("completions", body, lambda r: _completion_tops(r, len(prompts)))
        self.forward_calls += 1
        return reply

    def _chat_top(self, messages: list[dict[str, str]]) -> dict[str, float]:
        body = {
            "model": self.served_model,
            "messages": messages,
            "max_tokens": 1,
            "temperature": 0.0,
            "logprobs": True,
            "top_logprobs": self.top_logprobs,
            **({"chat_template_kwargs": self.chat_template_kwargs} if self.chat_template_kwargs else {}),
        }
        reply = self.client.post("chat/completions", body, _chat_top)
        self.forward_calls += 1
        return reply

    def _parallel_map(self, fn: Callable[[Any], Any], items: Sequence[Any]) -> list[Any]:
        if len(items) <= 1 or self.concurrency == 1:
            return [fn(x) for x in items]
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(items))) as pool:
            return list(pool.map(fn, items))

    # -- generation ---------------------------------------------------------------------------------
    def generate(
        self, text: str, max_new_tokens: int, seed: int = 0, do_sample: bool = False, temperature: float = 1.0
    ) -> Generation:
        if max_new_tokens < 1:
            raise SplHfError("max_new_tokens must be at least 1")
        body: dict[str, Any] = {
            "model": self.served_model,
            "max_tokens": max_new_tokens,
            "temperature": temperature if do_sample else 0.0,
            "seed": seed,
        }
        if self.tokenizer is not None:
            body["prompt"] = self._ids(text)
            path = "completions"
        else:
            body["messages"] = _messages(text)
            path = "chat/completions"
            if self.chat_template_kwargs:
                body["chat_template_kwargs"] = self.chat_template_kwargs
        out = self.client.post(path, body, _generation)
        self.forward_calls += 1
        return out


def _load_tokenizer(name: str) -> Any:
    from transformers import AutoTokenizer

    from spl_hf.backends.loading import resolve_model

    path, _, _ = resolve_model(name)
    return AutoTokenizer.from_pretrained(str(path), trust_remote_code=False)


def _messages(text: str) -> list[dict[str, str]]:
    """The messages :meth:`OpenAIBackend.render_chat` wrote into ``text``."""
    out = []
    for block in text.split(ROLE)[1:]:
        role, sep, content = block.partition(TEXT)
        if not sep:
            raise InputError("chat prompt lost its message marks")
        out.append({"role": role, "content": content})
    if not out:
        raise InputError("empty input")
    return out


def _completion_tops(reply: Any, n: int) -> list[dict[str, float]]:
    """The first token's top log-probabilities of each of ``n`` prompts (ValueError when malformed)."""
    choices = sorted(reply["choices"], key=lambda c: c["index"])
    if len(choices) != n or [c["index"] for c in choices] != list(range(n)):
        raise SplHfError(f"expected {n} choices, got {len(choices)}")
    tops = []
    for c in choices:
        top = c["logprobs"]["top_logprobs"][0]
        if not isinstance(top, dict) or not top:
            raise SplHfError("empty top_logprobs")
        tops.append({str(k): float(v) for k, v in top.items()})
    return tops


def _chat_top(reply: Any) -> dict[str, float]:
    entries = reply["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
    if not isinstance(entries, list) or not entries:
        raise SplHfError("empty top_logprobs")
    return {str(e["token"]): float(e["logprob"]) for e in entries}


def _generation(reply: Any) -> Generation:
    choice = reply["choices"][0]
    text = choice["text"] if "text" in choice else choice["message"]["content"]
    if not isinstance(text, str):
        raise SplHfError("reply has no text")
    n = int(reply.get("usage", {}).get("completion_tokens", 0))
    return Generation(text=text, n_tokens=n, hit_limit=choice.get("finish_reason") == "length")


__all__ = ["OpenAIBackend", "ServerError"]
