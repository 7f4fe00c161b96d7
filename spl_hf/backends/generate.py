"""Candidate generation: K responses per prompt under named instructions, seeded and cached.

An instruction is a system message placed before the conversation (merged into an existing system
message). Greedy decoding is the default; with sampling each item gets its own seed derived from the
run seed, the prompt, the instruction and the sample index, so a resumed or sharded run draws exactly
what a single full run draws.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from spl_hf.backends.base import Backend, Generation, InputError
from spl_hf.backends.settings import GenerationConfig, shipped_instructions
from spl_hf.backends.text import content_key, template_hash, validate_messages
from spl_hf.backends.worker import one_by_one

TEMPLATE_VERSION = 1


@dataclass(frozen=True)
class GenItem:
    prompt_id: str
    messages: tuple[dict[str, str], ...]
    instruction: str
    sample: int


def prompts_from_rows(rows: Iterable[Mapping[str, Any]]) -> tuple[list[tuple[str, tuple]], list[dict]]:
    """Distinct (prompt_id, messages) in first-seen order; malformed rows come back with reasons."""
    seen: dict[str, tuple] = {}
    failures = []
    for i, row in enumerate(rows):
        try:
            pid = row.get("prompt_id")
            if not isinstance(pid, str) or not pid:
                raise InputError("prompt_id: expected a non-empty string")
            messages = tuple(validate_messages(row.get("prompt"), "prompt"))
            if messages[-1]["role"] == "assistant":
                raise InputError("prompt: the last message must not be the assistant's")
            if pid in seen and seen[pid] != messages:
                raise InputError(f"prompt_id {pid!r}: used for two different prompts")
            seen.setdefault(pid, messages)
        except InputError as exc:
            failures.append({"index": i, "prompt_id": row.get("prompt_id"), "reason": str(exc)})
    return list(seen.items()), failures


def with_instruction(
    messages: Sequence[dict[str, str]], instruction: str, texts: dict[str, str | None] | None = None
) -> list[dict[str, str]]:
    text = (shipped_instructions() if texts is None else texts)[instruction]
    msgs = [dict(m) for m in messages]
    if text is None:
        return msgs
    if msgs and msgs[0]["role"] == "system":
        msgs[0]["content"] = f"{text}\n\n{msgs[0]['content']}"
        return msgs
    return [{"role": "system", "content": text}, *msgs]


class CandidateGenerator:
    def __init__(self, backend: Backend, config: GenerationConfig | None = None) -> None:
        self.backend = backend
        self.config = config or GenerationConfig()
        self.texts = self.config.texts()
        self.template_hash = template_hash(
            backend.template_fingerprint,
            instructions={n: self.texts[n] for n in self.config.instructions},
            version=TEMPLATE_VERSION,
        )

    def items(self, prompts: Sequence[tuple[str, tuple]]) -> list[GenItem]:
        return [
            GenItem(pid, msgs, ins, k)
            for pid, msgs in prompts
            for ins in self.config.instructions
            for k in range(self.config.k)
        ]

    def item_seed(self, item: GenItem) -> int:
        blob = f"{self.config.seed}|{content_key('p', list(item.messages))}|{item.instruction}|{item.sample}"
        return int.from_bytes(hashlib.sha256(blob.encode()).digest()[:4], "big")

    def key(self, item: GenItem) -> str:
        c = self.config
        return content_key(
            "generate",
            self.backend.info.revision,
            self.template_hash,
            list(item.messages),
            item.instruction,
            self.item_seed(item),
            c.max_new_tokens,
            c.do_sample,
            c.temperature if c.do_sample else None,
        )

    def generate(self, item: GenItem) -> Generation:
        text = self.backend.render_chat(with_instruction(item.messages, item.instruction, self.texts))
        c = self.config
        return self.backend.generate(
            text,
            c.max_new_tokens,
            seed=self.item_seed(item),
            do_sample=c.do_sample,
            temperature=c.temperature,
        )

    # -- the worker protocol (spl_hf.backends.worker) ----------------------------------------------
    kind = "generate"
    batch_groups = 1

    @staticmethod
    def item_id(item: GenItem) -> str:
        return content_key(
            "generate-item", item.prompt_id, list(item.messages), item.instruction, item.sample
        )

    @staticmethod
    def group(item: GenItem) -> str:
        return CandidateGenerator.item_id(item)

    @staticmethod
    def describe(item: GenItem) -> dict[str, Any]:
        return {"prompt_id": item.prompt_id, "instruction": item.instruction}

    @staticmethod
    def order(item: GenItem) -> tuple[int, str, str, int]:
        # longest prompt first
        return (-sum(len(m["content"]) for m in item.messages), item.prompt_id, item.instruction, item.sample)

    def compute_batch(self, items: Sequence[GenItem]) -> list[Any]:
        return one_by_one(self.generate, items)

    def output_row(self, it: GenItem, g: Generation) -> dict[str, Any]:
        return {
            "prompt_id": it.prompt_id,
            "response_id": f"{it.prompt_id}/{it.instruction}/{it.sample}",
            "prompt": list(it.messages),
            "instruction": it.instruction,
            "sample": it.sample,
            "response": g.text,
            "n_tokens": g.n_tokens,
            "max_new_tokens": self.config.max_new_tokens,
            "hit_limit": g.hit_limit,
            "seed": self.item_seed(it),
            "do_sample": self.config.do_sample,
            "model_id": self.backend.info.model_id,
            "model_revision": self.backend.info.revision,
            "template_hash": self.template_hash,
        }
