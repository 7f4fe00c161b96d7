"""Refusal evaluation: greedy responses to a prompt set, cached, then scored by a refusal matcher.

Items are ordered by prompt length and cut into fixed batches once, from the whole prompt set, so a
prompt is always generated in the same batch (its work item names the batch). The runner
(:mod:`spl_hf.backends.worker`) stores results as shards: a killed run resumes, a rerun computes nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from spl_hf.backends import Backend, Generation, InputError, content_key, template_hash
from spl_hf.errors import SplHfError
from spl_hf.evaluation.config import EvalConfig
from spl_hf.evaluation.prompts import EvalPrompt
from spl_hf.refusal import MATCHERS, compute_refusal, get_matcher, match_array

TEMPLATE_VERSION = 1


@dataclass(frozen=True)
class EvalItem:
    prompt: EvalPrompt
    text: str  # the rendered chat
    n_tokens: int


class RefusalEvaluator:
    def __init__(self, backend: Backend, config: EvalConfig | None = None) -> None:
        self.backend = backend
        self.config = config or EvalConfig()
        self.template_hash = template_hash(
            backend.template_fingerprint, system_prompt=self.config.system_prompt, version=TEMPLATE_VERSION
        )

    def messages(self, p: EvalPrompt) -> list[dict[str, str]]:
        msgs = [{"role": "user", "content": p.text}]
        if self.config.system_prompt:
            msgs.insert(0, {"role": "system", "content": self.config.system_prompt})
        return msgs

    def prepare(self, prompts: Sequence[EvalPrompt]) -> tuple[list[EvalItem], list[dict[str, Any]]]:
        """Rendered items that fit the context, and failures (with reason) for those that do not."""
        items, failures = [], []
        limit = getattr(self.backend, "max_length", None)
        for p in prompts:
            text = self.backend.render_chat(self.messages(p))
            n = self.backend.count_tokens(text)
            if limit is not None and n + self.config.max_new_tokens > limit:
                failures.append(
                    {
                        "prompt_id": p.prompt_id,
                        "row_id": p.row_id,
                        "reason": f"prompt is {n} tokens; with {self.config.max_new_tokens} new tokens it exceeds "
                        f"the model context ({limit})",
                    }
                )
                continue
            items.append(EvalItem(p, text, n))
        return items, failures

    def batches(self, items: Sequence[EvalItem]) -> list[list[EvalItem]]:
        ordered = sorted(items, key=lambda it: (-it.n_tokens, it.prompt.prompt_id))
        b = self.config.batch_size
        return [ordered[i : i + b] for i in range(0, len(ordered), b)]

    def works(self, prompt_set: str, items: Sequence[EvalItem]) -> list[EvalWork]:
        """The work items: each prompt tagged with its fixed batch (padding can move greedy decoding)."""
        out = []
        for batch in self.batches(items):
            sig = hashlib.sha256(
                "|".join(f"{it.prompt.prompt_id}\x00{it.text}" for it in batch).encode()
            ).hexdigest()
            out.extend(EvalWork(prompt_set, sig, it) for it in batch)
        return out

    # -- the worker protocol (spl_hf.backends.worker) ----------------------------------------------
    kind = "eval_refusal"
    batch_groups = 1  # one group is one generation batch

    @staticmethod
    def item_id(work: EvalWork) -> str:
        p = work.item.prompt
        return content_key("eval-item", work.prompt_set, work.batch, p.prompt_id, work.item.text)

    @staticmethod
    def group(work: EvalWork) -> str:
        return work.batch

    @staticmethod
    def describe(work: EvalWork) -> dict[str, Any]:
        return {"prompt_id": work.item.prompt.prompt_id, "row_id": work.item.prompt.row_id}

    @staticmethod
    def order(work: EvalWork) -> tuple[int, str]:
        return (-work.item.n_tokens, work.item.prompt.prompt_id)

    def compute_batch(self, works: Sequence[EvalWork]) -> list[Any]:
        from spl_hf.evaluation.batch import generate_batch

        try:
            return generate_batch(self.backend, [w.item.text for w in works], self.config.max_new_tokens)
        except InputError as exc:
            return [exc] * len(works)

    def output_row(self, work: EvalWork, g: Generation) -> dict[str, Any]:
        p, info = work.item.prompt, self.backend.info
        return {
            "prompt_set": work.prompt_set,
            "prompt_id": p.prompt_id,
            "row_id": p.row_id,
            "category": p.category,
            "source_label": p.source_label,
            "prompt": p.text,
            "response": g.text,
            "n_tokens": g.n_tokens,
            "max_new_tokens": self.config.max_new_tokens,
            "at_limit": g.hit_limit,
            "model_id": info.model_id,
            "model_revision": info.revision,
            "template_hash": self.template_hash,
        }


@dataclass(frozen=True)
class EvalWork:
    prompt_set: str
    batch: str  # hash of the batch's prompts: a prompt is only ever generated in the same batch
    item: EvalItem


def annotate_refusals(rows: list[dict[str, Any]], matcher: str) -> list[dict[str, Any]]:
    """Add the matcher's verdict (refusal, matched pattern, matcher id) to response rows."""
    if rows:
        refused, index = match_array([r["response"] for r in rows], matcher)
        m = get_matcher(matcher)
        for r, f, i in zip(rows, refused.tolist(), index.tolist(), strict=True):
            r["refusal"] = bool(f)
            r["matched"] = m.patterns[i] if i >= 0 else None
            r["matcher"] = m.id
    return rows


def refusal_metrics(rows: Sequence[dict[str, Any]], matcher: str) -> dict[str, Any]:
    """The chosen matcher's full result, plus every named matcher's rate for comparison."""
    if not rows:
        raise SplHfError("no responses to score: every prompt failed (see failures)")
    texts = [r["response"] for r in rows]
    limits = [bool(r["at_limit"]) for r in rows]
    cats = [r["source_label"] or r["category"] for r in rows]
    main = compute_refusal(texts, limits, cats, matcher).to_dict()
    for k in ("refusals", "matched"):
        main.pop(k)
    main["matchers"] = {}
    for mid in MATCHERS:
        r = compute_refusal(texts, limits, None, mid)
        main["matchers"][mid] = {
            "matcher_hash": r.matcher_hash,
            "n_refusals": r.n_refusals,
            "refusal_rate": r.refusal_rate,
            "refusal_rate_at_limit": r.refusal_rate_at_limit,
            "refusal_rate_not_at_limit": r.refusal_rate_not_at_limit,
        }
    return main
