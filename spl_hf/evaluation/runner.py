"""Refusal evaluation: greedy responses to a prompt set, cached, then scored by a refusal matcher.

Items are ordered by prompt length and cut into fixed batches once, from the whole prompt set, so a
prompt is always generated in the same batch (its cache key names the batch). A killed run resumes
where it stopped; ranks under ``accelerate launch`` take whole batches; a rerun computes nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from spl_hf.backends import Backend, Generation, InputError, ResultCache, content_key, template_hash
from spl_hf.errors import SplHfError
from spl_hf.evaluation.config import EvalConfig
from spl_hf.evaluation.prompts import EvalPrompt, PromptSet
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

    def _base_key(self, item: EvalItem) -> str:
        return content_key(
            "eval_refusal",
            self.backend.info.revision,
            self.template_hash,
            self.messages(item.prompt),
            self.config.max_new_tokens,
        )

    def keys(self, batch: Sequence[EvalItem]) -> list[str]:
        # Padding can move greedy decoding by rounding, so a result is only reused for the same batch.
        base = [self._base_key(it) for it in batch]
        sig = hashlib.sha256("|".join(base).encode()).hexdigest()
        return [content_key("eval_refusal_batch", k, sig) for k in base]

    def run(self, batches: Sequence[Sequence[EvalItem]], cache: ResultCache) -> dict[str, Any]:
        """Generate every batch with a missing result; one commit per batch."""
        from tqdm.auto import tqdm

        from spl_hf.evaluation.batch import generate_batch

        stats: dict[str, Any] = {"computed": 0, "cached": 0, "failures": []}
        todo = []
        for batch in batches:
            keys = self.keys(batch)
            have = cache.get_many(keys)
            if len(have) == len(keys):
                stats["cached"] += len(keys)
            else:
                todo.append((batch, keys))
        bar = tqdm(
            total=sum(len(b) for b, _ in todo),
            unit="prompt",
            desc="eval refusal",
            disable=not self.config.progress,
        )
        for batch, keys in todo:
            try:
                gens = generate_batch(self.backend, [it.text for it in batch], self.config.max_new_tokens)
            except InputError as exc:
                stats["failures"].extend(
                    {"prompt_id": it.prompt.prompt_id, "row_id": it.prompt.row_id, "reason": str(exc)}
                    for it in batch
                )
                bar.update(len(batch))
                continue
            cache.put_many("eval_refusal", {k: asdict(g) for k, g in zip(keys, gens, strict=True)})
            stats["computed"] += len(batch)
            bar.update(len(batch))
        bar.close()
        return stats

    def collect(
        self, prompt_set: PromptSet, batches: Sequence[Sequence[EvalItem]], cache: ResultCache
    ) -> list[dict]:
        """Response rows in prompt-set order (prompts without a stored result are left to the failures)."""
        found: dict[str, tuple[EvalItem, Generation]] = {}
        for batch in batches:
            keys = self.keys(batch)
            have = cache.get_many(keys)
            for it, k in zip(batch, keys, strict=True):
                if k in have:
                    found[it.prompt.prompt_id] = (it, Generation(**have[k]))
        info = self.backend.info
        rows = []
        for p in prompt_set.prompts:
            if p.prompt_id not in found:
                continue
            _, g = found[p.prompt_id]
            rows.append(
                {
                    "prompt_set": prompt_set.name,
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
            )
        if rows:
            refused, index = match_array([r["response"] for r in rows], self.config.matcher)
            m = get_matcher(self.config.matcher)
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
