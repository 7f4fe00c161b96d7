"""The attribute schema: which prompt and response attributes exist, and what they mean.

The schema is data (``spl_hf/data/schema.yaml``); this module only loads and validates it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Literal

from spl_hf.errors import SplHfError, UnknownNameError
from spl_hf.yamlio import load_yaml, load_yaml_file

Scope = Literal["prompt", "response"]
Kind = Literal["bool", "category"]


@dataclass(frozen=True)
class Attribute:
    name: str
    scope: Scope
    kind: Kind
    definition: str
    values: tuple[str, ...] = ()
    value_definitions: Mapping[str, str] = field(default_factory=dict)

    @property
    def options(self) -> tuple[str, ...]:
        """Allowed answers, as the labeler offers them (booleans as ``false``/``true``)."""
        return ("false", "true") if self.kind == "bool" else self.values


@dataclass(frozen=True)
class AttributeSchema:
    name: str
    version: int
    prompt: tuple[Attribute, ...]
    response: tuple[Attribute, ...]
    source: str = "<memory>"

    @property
    def attributes(self) -> tuple[Attribute, ...]:
        return self.prompt + self.response

    def attribute(self, name: str) -> Attribute:
        for attr in self.attributes:
            if attr.name == name:
                return attr
        raise UnknownNameError(f"{self.source}: unknown attribute {name!r}")

    def names(self, scope: Scope | None = None) -> tuple[str, ...]:
        attrs = self.attributes if scope is None else (self.prompt if scope == "prompt" else self.response)
        return tuple(a.name for a in attrs)

    def to_dict(self) -> dict:
        def one(a: Attribute) -> dict:
            d: dict = {"type": a.kind, "definition": a.definition}
            if a.kind == "category":
                d["values"] = list(a.values)
                if a.value_definitions:
                    d["value_definitions"] = dict(a.value_definitions)
            return d

        return {
            "name": self.name,
            "version": self.version,
            "prompt": {a.name: one(a) for a in self.prompt},
            "response": {a.name: one(a) for a in self.response},
        }

    @property
    def hash(self) -> str:
        """Content hash over the canonical form: any edited definition changes it."""
        canon = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canon.encode()).hexdigest()

    def n_assignments(self) -> int:
        n = 1
        for a in self.attributes:
            n *= len(a.options)
        return n


def _parse_attr(source: str, scope: Scope, name: str, spec: object) -> Attribute:
    where = f"{source}: {scope}.{name}"
    if not isinstance(spec, dict):
        raise SplHfError(f"{where}: expected a mapping, got {type(spec).__name__}")
    unknown = set(spec) - {"type", "definition", "values", "value_definitions"}
    if unknown:
        raise SplHfError(f"{where}: unknown keys {sorted(unknown)}")
    kind = spec.get("type")
    if kind not in ("bool", "category"):
        raise SplHfError(f"{where}: type must be 'bool' or 'category', got {kind!r}")
    definition = spec.get("definition")
    if not isinstance(definition, str) or not definition.strip():
        raise SplHfError(f"{where}: a non-empty 'definition' is required")
    values: tuple[str, ...] = ()
    value_defs: dict[str, str] = {}
    if kind == "category":
        raw = spec.get("values")
        if not isinstance(raw, list) or len(raw) < 2 or not all(isinstance(v, str) for v in raw):
            raise SplHfError(f"{where}: a category needs a list of at least two string 'values'")
        if len(set(raw)) != len(raw):
            raise SplHfError(f"{where}: duplicate values")
        values = tuple(raw)
        value_defs = dict(spec.get("value_definitions") or {})
        extra = set(value_defs) - set(values)
        if extra:
            raise SplHfError(f"{where}: value_definitions for unknown values {sorted(extra)}")
    elif "values" in spec:
        raise SplHfError(f"{where}: a bool attribute takes no 'values'")
    return Attribute(name, scope, kind, " ".join(definition.split()), values, value_defs)


def parse_schema(data: object, source: str = "<memory>") -> AttributeSchema:
    if not isinstance(data, dict):
        raise SplHfError(f"{source}: schema must be a mapping")
    unknown = set(data) - {"name", "version", "prompt", "response"}
    if unknown:
        raise SplHfError(f"{source}: unknown keys {sorted(unknown)}")
    scopes: dict[str, tuple[Attribute, ...]] = {}
    for scope in ("prompt", "response"):
        block = data.get(scope)
        if not isinstance(block, dict) or not block:
            raise SplHfError(f"{source}: '{scope}' must map attribute names to specs")
        scopes[scope] = tuple(_parse_attr(source, scope, n, s) for n, s in block.items())  # type: ignore[arg-type]
    names = [a.name for a in scopes["prompt"] + scopes["response"]]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise SplHfError(f"{source}: attribute names used in both scopes: {sorted(dup)}")
    return AttributeSchema(
        name=str(data.get("name", "schema")),
        version=int(data.get("version", 1)),
        prompt=scopes["prompt"],
        response=scopes["response"],
        source=source,
    )


def load_schema(path: str | Path) -> AttributeSchema:
    path = Path(path)
    return parse_schema(load_yaml_file(path, "schema file"), str(path))


@cache
def default_schema() -> AttributeSchema:
    text = resources.files("spl_hf.data").joinpath("schema.yaml").read_text()
    return parse_schema(load_yaml(text, "spl_hf/data/schema.yaml"), "spl_hf/data/schema.yaml")
