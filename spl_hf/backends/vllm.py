"""Optional vLLM backend (``pip install 'spl_hf[vllm]'``) behind the same interface as :class:`HFBackend`.

vllm is imported only when a :class:`VLLMBackend` is built, so this module imports anywhere. Prefix
sharing comes from vLLM's automatic prefix caching (enabled here): requests that repeat the judge's
shared prefix reuse its KV blocks. Each answer label is read as the raw (pre-restriction) log-probability
of that label when it is the only allowed token, one one-token request per (suffix, label), so every
label's probability is exact even when it is not among the model's top tokens.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from spl_hf.backends.base import Generation, InputError, LabelScores, TokenizerText
from spl_hf.backends.loading import resolve_model

INSTALL_HINT = "the vLLM backend needs vllm: pip install 'spl_hf[vllm]'"


class VLLMBackend(TokenizerText):
    def __init__(
        self,
        model: str | None = None,
        max_length: int | None = None,
        gpu_memory_utilization: float = 0.85,
        dtype: str = "auto",
        **llm_kwargs: Any,
    ) -> None:
        try:
            from vllm import LLM
        except ImportError as exc:
            raise ImportError(INSTALL_HINT) from exc
        path, self.info, _ = resolve_model(model)
        self.llm = LLM(
            model=str(path),
            tokenizer=str(path),
            trust_remote_code=False,
            enable_prefix_caching=True,
            max_model_len=max_length,
            gpu_memory_utilization=gpu_memory_utilization,
            dtype=dtype,
            **llm_kwargs,
        )
        self.tokenizer = self.llm.get_tokenizer()
        self.boundary_fallbacks = 0
        try:
            self.max_length = int(self.llm.llm_engine.model_config.max_model_len)
        except AttributeError:  # engine internals moved between vLLM releases
            self.max_length = int(max_length or getattr(self.tokenizer, "model_max_length", 4096))
        self.forward_calls = 0

    def _score(self, token_lists: list[list[int]], labels: Sequence[Sequence[str]]) -> list[LabelScores]:
        from vllm import SamplingParams, TokensPrompt

        prompts, params, index = [], [], []
        for i, (ids, labs) in enumerate(zip(token_lists, labels, strict=True)):
            if not ids:
                raise InputError("empty input")
            if len(ids) + 1 > self.max_length:
                raise InputError(
                    f"input is {len(ids)} tokens, longer than the model context ({self.max_length})"
                )
            for lab in labs:
                tid = self.label_id(lab)
                prompts.append(TokensPrompt(prompt_token_ids=ids))
                params.append(
                    SamplingParams(max_tokens=1, temperature=0.0, logprobs=0, allowed_token_ids=[tid])
                )
                index.append((i, tid))
        outs = self.llm.generate(prompts, params, use_tqdm=False)
        self.forward_calls += len(outs)
        probs: list[list[float]] = [[] for _ in token_lists]
        for (i, tid), out in zip(index, outs, strict=True):
            probs[i].append(math.exp(out.outputs[0].logprobs[0][tid].logprob))
        return [LabelScores(tuple(labs), tuple(p)) for labs, p in zip(labels, probs, strict=True)]

    def next_token_scores(
        self, prefix: str, suffixes: Sequence[str], labels: Sequence[Sequence[str]]
    ) -> list[LabelScores]:
        p = self.encode(prefix)
        lists = []
        for s in suffixes:
            joined = self.encode(prefix + s)
            if joined != p + self.encode(s):
                # As in the HF backend: score the text as it tokenizes when joined (vLLM's prefix
                # cache then shares only the common leading tokens), rather than abort the run.
                self.boundary_fallbacks += 1
            lists.append(joined)
        return self._score(lists, labels)

    def next_token_scores_full(self, text: str, labels: Sequence[str]) -> LabelScores:
        return self._score([self.encode(text)], [labels])[0]

    def generate(
        self, text: str, max_new_tokens: int, seed: int = 0, do_sample: bool = False, temperature: float = 1.0
    ) -> Generation:
        from vllm import SamplingParams, TokensPrompt

        ids = self.encode(text)
        if not ids:
            raise InputError("empty input")
        if len(ids) + max_new_tokens > self.max_length:
            raise InputError(f"input is {len(ids)} tokens, longer than the model context ({self.max_length})")
        params = SamplingParams(
            max_tokens=max_new_tokens, temperature=temperature if do_sample else 0.0, seed=seed
        )
        (out,) = self.llm.generate([TokensPrompt(prompt_token_ids=ids)], params, use_tqdm=False)
        self.forward_calls += 1
        c = out.outputs[0]
        return Generation(text=c.text, n_tokens=len(c.token_ids), hit_limit=c.finish_reason == "length")
