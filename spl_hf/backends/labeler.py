"""SPL attribute labeler: prompt attributes once per distinct prompt, response attributes per response.

Modes:
- ``constrained`` (default): one shared prefix (the request, or request and reply) and one question
  suffix per attribute; the answer is read from next-token probabilities over lettered options, so
  there is no free text and no parse failure, and every option's probability is stored.
- ``json``: the source paper's mode: one generation that must be a JSON object holding every attribute
  of the scope, validated against the schema. Invalid output keeps its raw text and parse status and
  the item gets no attributes (never a default).

Instructions are built from the schema's definitions, so editing a definition changes the template hash.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from spl_hf.backends.base import Backend, InputError
from spl_hf.backends.options import argmax_option, option_block, option_keys
from spl_hf.backends.settings import LabelerConfig
from spl_hf.backends.text import (
    content_key,
    split_template,
    template_hash,
    transcript,
    validate_messages,
    validate_text,
)
from spl_hf.backends.worker import one_by_one
from spl_hf.errors import SplHfError
from spl_hf.schema import Attribute, AttributeSchema, default_schema

Scope = Literal["prompt", "response"]
TEMPLATE_VERSION = 2  # 2: a transcript message is shown without a stacked speaker label

HEADS = {
    "prompt": (
        "Read the request below, then answer a question about the request with the letter of one option."
        "\n\n[Request]\n{conversation}\n[End of request]"
    ),
    "response": (
        "Read the request and the reply below, then answer a question about the reply with the letter of "
        "one option.\n\n"
        "[Request]\n{conversation}\n[End of request]\n\n[Reply]\n{response}\n[End of reply]"
    ),
}
QUESTION = "\n\nAttribute '{name}': {definition}\n{ask}\n{options}"
BOOL_ASK = {"prompt": "Is this true of the request?", "response": "Is this true of the reply?"}
BOOL_SHOWN = ("no", "yes")  # shown for false/true; stored as the schema's booleans
CATEGORY_ASK = "Which value fits best?"
JSON_INSTRUCTION = (
    "\n\nLabel the {what} with these attributes:\n{fields}\n"
    "Reply with one JSON object with exactly these keys and nothing else."
)


@dataclass(frozen=True)
class LabelItem:
    scope: Scope
    prompt_id: str
    response_id: str | None
    messages: tuple[dict[str, str], ...]
    response: str | None = None

    def describe(self) -> dict[str, Any]:
        """What a failure record names the item by (the labeler's and the verdict judge's)."""
        return {"prompt_id": self.prompt_id, "response_id": self.response_id}

    @property
    def chars(self) -> int:
        """Characters of the prompt's messages and the response: the runners take long items first,
        so a too-long input fails before the short ones are spent."""
        return sum(len(m["content"]) for m in self.messages) + len(self.response or "")


@dataclass(frozen=True)
class LabelResult:
    """Attributes (``None`` when unparsed), per-option probabilities (constrained), raw text (json)."""

    status: str  # "ok", "invalid_json", "schema_error", "low_label_mass" (constrained, below the floor)
    attributes: dict[str, Any] | None
    probs: dict[str, dict[str, float]] = field(default_factory=dict)
    mass: dict[str, float] = field(default_factory=dict)
    raw_text: str | None = None
    hit_limit: bool | None = None
    error: str | None = None


def items_from_rows(rows: Iterable[Mapping[str, Any]]) -> tuple[list[LabelItem], list[dict[str, Any]]]:
    """Prompt items (one per distinct prompt_id) and response items from item or unified pair rows.

    A row has ``prompt_id`` and ``prompt`` and either ``response`` (with optional ``response_id``) or
    ``response_a``/``response_b`` (a unified pair row; ids ``{pair_id}/a`` and ``{pair_id}/b``).
    Malformed rows come back as failures with their reason.
    """
    prompts: dict[str, LabelItem] = {}
    responses: list[LabelItem] = []
    failures: list[dict[str, Any]] = []
    seen_responses: set[str] = set()
    for i, row in enumerate(rows):
        try:
            pid = row.get("prompt_id")
            if not isinstance(pid, str) or not pid:
                raise InputError("prompt_id: expected a non-empty string")
            messages = tuple(validate_messages(row.get("prompt"), "prompt"))
            if pid in prompts and prompts[pid].messages != messages:
                raise InputError(f"prompt_id {pid!r}: used for two different prompts")
            new: list[LabelItem] = []
            if "response_a" in row or "response_b" in row:
                base = row.get("pair_id") or pid
                for side in ("a", "b"):
                    text = validate_text(row.get(f"response_{side}"), f"response_{side}")
                    new.append(LabelItem("response", pid, f"{base}/{side}", messages, text))
            elif row.get("response") is not None:
                rid = row.get("response_id") or f"{pid}/{len(responses)}"
                new.append(
                    LabelItem("response", pid, str(rid), messages, validate_text(row["response"], "response"))
                )
            for item in new:
                if item.response_id in seen_responses:
                    raise InputError(f"response_id: duplicate {item.response_id!r}")
            prompts.setdefault(pid, LabelItem("prompt", pid, None, messages))
            for item in new:
                seen_responses.add(item.response_id)  # type: ignore[arg-type]
                responses.append(item)
        except InputError as exc:
            failures.append({"index": i, "prompt_id": row.get("prompt_id"), "reason": str(exc)})
    return list(prompts.values()) + responses, failures


class AttributeLabeler:
    def __init__(
        self, backend: Backend, schema: AttributeSchema | None = None, config: LabelerConfig | None = None
    ) -> None:
        self.backend = backend
        self.schema = schema or default_schema()
        self.config = config or LabelerConfig()
        # Only constrained answers have a label mass; json mode ignores the floor.
        self.min_label_mass = (
            float(getattr(backend, "min_label_mass", 0.0)) if self.config.mode == "constrained" else 0.0
        )
        if self.config.mode not in ("constrained", "json"):
            raise SplHfError(f"mode: expected 'constrained' or 'json', got {self.config.mode!r}")
        self.template_hash = template_hash(
            backend.template_fingerprint,
            mode=self.config.mode,
            schema=self.schema.hash,
            heads=HEADS,
            question=QUESTION,
            bool_ask=BOOL_ASK,
            bool_shown=BOOL_SHOWN,
            category_ask=CATEGORY_ASK,
            json_instruction=JSON_INSTRUCTION,
            max_new_tokens=self.config.max_new_tokens if self.config.mode == "json" else None,
            version=TEMPLATE_VERSION,
            min_label_mass=self.min_label_mass,
        )
        if self.config.mode == "constrained" and hasattr(backend, "check_labels"):
            widest = max((len(a.options) for a in (*self.schema.prompt, *self.schema.response)), default=0)
            backend.check_labels(option_keys(widest))  # refused before any scoring

    def attributes(self, scope: Scope) -> tuple[Attribute, ...]:
        return self.schema.prompt if scope == "prompt" else self.schema.response

    # -- prompt parts ---------------------------------------------------------------------------
    def head(self, item: LabelItem) -> str:
        conv = transcript(item.messages)
        if item.scope == "prompt":
            return HEADS["prompt"].format(conversation=conv)
        return HEADS["response"].format(conversation=conv, response=(item.response or "").strip())

    @staticmethod
    def question(attr: Attribute) -> str:
        if attr.kind == "bool":
            ask, options = BOOL_ASK[attr.scope], option_block(BOOL_SHOWN)
        else:
            ask, options = CATEGORY_ASK, option_block(attr.values, attr.value_definitions)
        return QUESTION.format(name=attr.name, definition=attr.definition, ask=ask, options=options)

    def json_fields(self, scope: Scope) -> str:
        lines = []
        for a in self.attributes(scope):
            kind = "true or false" if a.kind == "bool" else "one of " + ", ".join(f'"{v}"' for v in a.values)
            lines.append(f'- "{a.name}" ({kind}): {a.definition}')
        return "\n".join(lines)

    def key(self, item: LabelItem) -> str:
        return content_key(
            "label",
            self.backend.info.revision,
            self.template_hash,
            item.scope,
            list(item.messages),
            item.response,
        )

    # -- labeling -------------------------------------------------------------------------------
    def label(self, item: LabelItem) -> LabelResult:
        return self._constrained(item) if self.config.mode == "constrained" else self._json(item)

    def _constrained(self, item: LabelItem) -> LabelResult:
        attrs = self.attributes(item.scope)
        prefix, tail = split_template(self.backend.render_chat, self.head(item))
        keys = [option_keys(len(a.options)) for a in attrs]
        scores = self.backend.next_token_scores(prefix, [self.question(a) + tail for a in attrs], keys)
        values: dict[str, Any] = {}
        probs: dict[str, dict[str, float]] = {}
        mass: dict[str, float] = {}
        for a, s in zip(attrs, scores, strict=True):
            norm = s.normalised
            probs[a.name] = dict(zip(a.options, norm, strict=True))
            mass[a.name] = s.mass
            best = argmax_option(a.options, norm)
            values[a.name] = (best == "true") if a.kind == "bool" else best
        low = [f"{n} {m:.4g}" for n, m in mass.items() if m < self.min_label_mass]
        if low:
            # Not labelled: the answer letters held too little of the model's belief to trust the choice.
            error = f"label mass below min_label_mass {self.min_label_mass:g}: {', '.join(low)}"
            return LabelResult("low_label_mass", None, probs, mass, error=error)
        return LabelResult("ok", values, probs, mass)

    def _json(self, item: LabelItem) -> LabelResult:
        what = "request" if item.scope == "prompt" else "reply"
        content = self.head(item) + JSON_INSTRUCTION.format(what=what, fields=self.json_fields(item.scope))
        text = self.backend.render_chat([{"role": "user", "content": content}])
        gen = self.backend.generate(text, self.config.max_new_tokens)
        status, values, error = parse_json_attributes(gen.text, self.attributes(item.scope))
        return LabelResult(status, values, raw_text=gen.text, hit_limit=gen.hit_limit, error=error)

    # -- the worker protocol (spl_hf.backends.worker) ----------------------------------------------
    kind = "label"
    batch_groups = 1

    @staticmethod
    def item_id(item: LabelItem) -> str:
        return content_key(
            "label-item", item.scope, item.prompt_id, item.response_id, list(item.messages), item.response
        )

    @staticmethod
    def group(item: LabelItem) -> str:
        return AttributeLabeler.item_id(item)

    @staticmethod
    def describe(item: LabelItem) -> dict[str, Any]:
        return item.describe()

    @staticmethod
    def order(item: LabelItem) -> tuple[int, str]:
        return (-item.chars, AttributeLabeler.item_id(item))  # longest first

    def compute_batch(self, items: Sequence[LabelItem]) -> list[Any]:
        return one_by_one(self.label, items)

    def output_row(self, item: LabelItem, r: LabelResult) -> dict[str, Any]:
        # Nested values are JSON strings so prompt and response rows share one flat file schema.
        return {
            "scope": item.scope,
            "prompt_id": item.prompt_id,
            "response_id": item.response_id,
            "status": r.status,
            "attributes_json": None if r.attributes is None else json.dumps(r.attributes, sort_keys=True),
            "probs_json": json.dumps(r.probs, sort_keys=True) if r.probs else None,
            "mass_json": json.dumps(r.mass, sort_keys=True) if r.mass else None,
            "raw_text": r.raw_text,
            "hit_limit": r.hit_limit,
            "error": r.error,
            "mode": self.config.mode,
            "schema_hash": self.schema.hash,
            "model_id": self.backend.info.model_id,
            "model_revision": self.backend.info.revision,
            "template_hash": self.template_hash,
        }


def parse_json_attributes(
    text: str, attrs: Sequence[Attribute]
) -> tuple[str, dict[str, Any] | None, str | None]:
    """(status, attributes or None, error) for one json-mode generation."""
    body = text.strip()
    if body.startswith("```"):
        body = body.strip("`").removeprefix("json").strip()
    start = body.find("{")
    if start < 0:
        return "invalid_json", None, "no JSON object in the output"
    try:
        obj, _ = json.JSONDecoder().raw_decode(body[start:])
    except json.JSONDecodeError as exc:
        return "invalid_json", None, f"JSON error: {exc.msg} at char {exc.pos}"
    if not isinstance(obj, dict):
        return "invalid_json", None, "the JSON value is not an object"
    names = [a.name for a in attrs]
    missing = [n for n in names if n not in obj]
    extra = sorted(set(obj) - set(names))
    if missing or extra:
        return "schema_error", None, f"missing keys {missing}, unknown keys {extra}"
    values: dict[str, Any] = {}
    for a in attrs:
        v = obj[a.name]
        if a.kind == "bool" and not isinstance(v, bool):
            return "schema_error", None, f"{a.name}: expected true or false, got {v!r}"
        if a.kind == "category" and v not in a.values:
            return "schema_error", None, f"{a.name}: {v!r} is not one of {list(a.values)}"
        values[a.name] = v
    return "ok", values, None


def read_labels(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Decode the JSON columns of labeler output rows back into dicts."""
    out = []
    for r in rows:
        d = dict(r)
        for col in ("attributes_json", "probs_json", "mass_json"):
            d[col.removesuffix("_json")] = json.loads(d[col]) if d.get(col) else None
        out.append(d)
    return out
