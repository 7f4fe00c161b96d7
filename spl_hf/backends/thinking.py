"""Reasoning chat templates, found by what they render, and the one setting that answers without thinking.

A judge reads the first token after the generation prompt. A reasoning model writes a thinking block
there, so that token is not its answer. A template is a reasoning template when its rendered generation
prompt opens a thinking block (``…<think>\\n``), or when the tokenizer or template knows thinking tokens
and the generation prompt does not close a block before the answer (DeepSeek-R1 distills, a Qwen3
switch left on). Such a template is refused before any weights load, unless the template arguments
close the block (``{"enable_thinking": false}``) or ``close_thinking`` appends the closing text (which
is then part of the template hash).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from spl_hf.errors import SplHfError

OPEN, CLOSE = "<think>", "</think>"
PROBE_TEXT = "Question?"
PROBE = [{"role": "user", "content": PROBE_TEXT}]


class TemplateError(SplHfError):
    """A chat template a judge cannot use (missing, or it has the model think before answering)."""


def render_probe(tokenizer: Any, kwargs: Mapping[str, Any]) -> str:
    return tokenizer.apply_chat_template(PROBE, tokenize=False, add_generation_prompt=True, **dict(kwargs))


def generation_tail(prompt: str) -> str:
    """What the template writes after the probe's user text: the generation prompt and its markers."""
    return prompt[prompt.rfind(PROBE_TEXT) + len(PROBE_TEXT) :]


def knows_thinking(tokenizer: Any) -> bool:
    """The tokenizer has thinking tokens, or its template mentions them."""
    vocab = tokenizer.get_vocab()
    return OPEN in vocab or CLOSE in vocab or CLOSE in (tokenizer.chat_template or "")


def thinking_state(tokenizer: Any, prompt: str) -> str | None:
    """``"open"`` (the generation prompt opens a block), ``"implied"`` (thinking tokens, no closed block
    before the answer) or None (the first generated token is the answer)."""
    tail = generation_tail(prompt)
    opened, closed = tail.rfind(OPEN), tail.rfind(CLOSE)
    if opened > closed:
        return "open"
    if closed >= 0:
        return None
    return "implied" if knows_thinking(tokenizer) else None


def closing_text(state: str | None) -> str:
    """Text that ends the thinking block before the answer (what Qwen3 writes with thinking off)."""
    if state == "open":
        return f"{CLOSE}\n\n"
    if state == "implied":
        return f"{OPEN}\n\n{CLOSE}\n\n"
    return ""


def template_id(tokenizer: Any) -> str:
    text = tokenizer.chat_template or ""
    return f"chat template sha256:{hashlib.sha256(text.encode()).hexdigest()[:12]}"


def check_chat_template(
    tokenizer: Any, model: str, kwargs: Mapping[str, Any], close_thinking: bool = False, what: str = ""
) -> None:
    """Refuse a missing chat template, or a reasoning template left thinking, naming model and settings."""
    source = getattr(tokenizer, "name_or_path", "") or "?"
    if not getattr(tokenizer, "chat_template", None):
        raise TemplateError(
            f"{what}model {model}: its tokenizer ({source}) has no chat template (chat_template.jinja or "
            "tokenizer_config.json 'chat_template'); a judge needs an instruction model's template: set "
            "model to an instruction-tuned model, or add its template file to the model folder"
        )
    if close_thinking:
        return
    prompt = render_probe(tokenizer, kwargs)
    state = thinking_state(tokenizer, prompt)
    if state is None:
        return
    fixes = ["close_thinking: true (--close_thinking)"]
    if "enable_thinking" in (tokenizer.chat_template or ""):
        off = render_probe(tokenizer, {**kwargs, "enable_thinking": False})
        if thinking_state(tokenizer, off) is None:
            fixes.insert(0, 'chat_template_kwargs {"enable_thinking": false}')
    how = "opens a thinking block" if state == "open" else "leaves the thinking block unclosed"
    raise TemplateError(
        f"{what}model {model}: its {template_id(tokenizer)} ({source}) is a reasoning template: the generation "
        f"prompt {how} (it ends {generation_tail(prompt)[-40:]!r}), so the first token would not be the "
        f"answer; set {' or '.join(fixes)}, or use a judge model without thinking"
    )


def fingerprint_parts(close_thinking: bool, tokenizer: Any, kwargs: Mapping[str, Any]) -> dict[str, str]:
    """The closing text, for the template hash (empty when the setting is off: older hashes unchanged)."""
    if not close_thinking:
        return {}
    state = thinking_state(tokenizer, render_probe(tokenizer, kwargs))
    return {"close_thinking": json.dumps(closing_text(state))}
