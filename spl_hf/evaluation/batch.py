"""Greedy generation of many prompts at once.

transformers: left-padded batches through ``model.generate`` (one call per batch); vLLM: one
``generate`` call over the batch (its scheduler batches internally); any other backend: one
``backend.generate`` per prompt. A row's text stops at its first stop token; ``hit_limit`` means the
row used all ``max_new_tokens`` without one. Stop tokens are the model's generation-config end
tokens plus the tokenizer's: chat models such as Gemma end a turn with a token other than the
tokenizer's ``eos``, and stopping only at the latter would run every response to the limit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from spl_hf.backends import Generation


def stop_token_ids(backend: Any) -> list[int] | None:
    """The token ids that end a response (None for backends that decide this themselves, e.g. vLLM)."""
    model = getattr(backend, "model", None)
    if model is None:
        return None
    ids: set[int] = set()
    eos = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    if isinstance(eos, int):
        ids.add(eos)
    elif eos is not None:
        ids.update(int(e) for e in eos)
    if backend.tokenizer.eos_token_id is not None:
        ids.add(int(backend.tokenizer.eos_token_id))
    return sorted(ids)


def generate_batch(backend: Any, texts: Sequence[str], max_new_tokens: int) -> list[Generation]:
    if hasattr(backend, "llm"):
        return _vllm_batch(backend, texts, max_new_tokens)
    if hasattr(backend, "model"):
        return _hf_batch(backend, texts, max_new_tokens)
    return [backend.generate(t, max_new_tokens) for t in texts]


def _vllm_batch(backend: Any, texts: Sequence[str], max_new_tokens: int) -> list[Generation]:
    from vllm import SamplingParams, TokensPrompt

    prompts = [TokensPrompt(prompt_token_ids=backend.encode(t)) for t in texts]
    outs = backend.llm.generate(
        prompts, SamplingParams(max_tokens=max_new_tokens, temperature=0.0), use_tqdm=False
    )
    backend.forward_calls += 1
    gens = []
    for out in outs:
        c = out.outputs[0]
        gens.append(Generation(text=c.text, n_tokens=len(c.token_ids), hit_limit=c.finish_reason == "length"))
    return gens


def _hf_batch(backend: Any, texts: Sequence[str], max_new_tokens: int) -> list[Generation]:
    import torch

    tok = backend.tokenizer
    stops = stop_token_ids(backend) or []
    pad = tok.pad_token_id if tok.pad_token_id is not None else (stops[0] if stops else 0)
    ids = [backend.encode(t) for t in texts]
    width = max(len(x) for x in ids)
    input_ids = torch.full((len(ids), width), pad, dtype=torch.long)
    mask = torch.zeros((len(ids), width), dtype=torch.long)
    for i, x in enumerate(ids):
        input_ids[i, width - len(x) :] = torch.tensor(x)
        mask[i, width - len(x) :] = 1
    with torch.inference_mode():
        out = backend.model.generate(
            input_ids=input_ids.to(backend.device),
            attention_mask=mask.to(backend.device),
            max_new_tokens=max_new_tokens,
            do_sample=False,
            temperature=None,
            top_p=None,
            top_k=None,
            pad_token_id=pad,
            eos_token_id=stops or None,
        )
    backend.forward_calls += 1
    gens = []
    stop_set = set(stops)
    for row in out[:, width:].tolist():
        end = next((i + 1 for i, t in enumerate(row) if t in stop_set), None)
        new = row[:end] if end is not None else row
        gens.append(
            Generation(
                text=tok.decode(new, skip_special_tokens=True),
                n_tokens=len(new),
                hit_limit=end is None and len(new) >= max_new_tokens,
            )
        )
    return gens
