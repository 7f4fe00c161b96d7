"""Rule bases: named predicates, rules (id, condition, verdict) and a fixed verdict ranking.

A rule base is data (YAML). Loading validates it completely against the attribute schema
and computes a content hash over its canonical form, which every derivation records.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

import yaml

from spl_hf.rules.compile import check_expr, expand
from spl_hf.rules.expr import Expr, ExprError, names_in, parse_expr, to_source
from spl_hf.schema import AttributeSchema, default_schema

_TOP_KEYS = {"id", "schema", "predicates", "verdicts", "rules", "description"}
_RULE_KEYS = {"id", "when", "verdict", "reconstructed", "note"}


class RuleBaseError(ValueError):
    """An invalid rule base; the message names the file, the rule or predicate, and the position."""


@dataclass(frozen=True)
class Rule:
    id: str
    when: Expr
    verdict: str
    reconstructed: bool = False
    line: int = 0


@dataclass(frozen=True)
class RuleBase:
    id: str
    schema: AttributeSchema
    predicates: dict[str, Expr]
    verdicts: dict[str, int]
    rules: tuple[Rule, ...]
    source: str = "<memory>"

    def canonical(self) -> dict:
        return {
            "id": self.id,
            "schema": self.schema.hash,
            "predicates": {n: to_source(e) for n, e in self.predicates.items()},
            "verdicts": self.verdicts,
            "rules": [
                {"id": r.id, "when": to_source(r.when), "verdict": r.verdict, "reconstructed": r.reconstructed}
                for r in self.rules
            ],
        }

    @property
    def hash(self) -> str:
        """sha256 over the canonical form: formatting and comments do not change it, meaning does."""
        text = json.dumps(self.canonical(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()

    @property
    def rule_ids(self) -> tuple[str, ...]:
        return tuple(r.id for r in self.rules)

    @property
    def verdict_names(self) -> tuple[str, ...]:
        """Verdicts from the most to the least preferred."""
        return tuple(sorted(self.verdicts, key=lambda v: -self.verdicts[v]))

    def expanded(self) -> tuple[Expr, ...]:
        """Each rule's condition with predicates inlined (attributes only)."""
        return tuple(expand(r.when, self.predicates) for r in self.rules)

    def to_yaml(self) -> str:
        """A YAML text that loads back to a rule base with the same hash."""
        data = self.canonical()
        data["schema"] = self.schema.name
        for r in data["rules"]:
            if not r["reconstructed"]:
                del r["reconstructed"]
        return yaml.safe_dump(data, sort_keys=False, width=200)


def _line_of(node: yaml.Node | None) -> int:
    return node.start_mark.line + 1 if node is not None else 0


def _mapping_lines(node: yaml.Node | None, key: str) -> dict:
    """Map child keys (or list indices) under ``key`` to their 1-based line numbers."""
    if not isinstance(node, yaml.MappingNode):
        return {}
    for k, v in node.value:
        if k.value == key:
            if isinstance(v, yaml.MappingNode):
                return {kk.value: _line_of(kk) for kk, _ in v.value}
            if isinstance(v, yaml.SequenceNode):
                return {i: _line_of(item) for i, item in enumerate(v.value)}
    return {}


def parse_rulebase(text: str, source: str = "<memory>", schema: AttributeSchema | None = None) -> RuleBase:
    schema = schema or default_schema()
    try:
        data = yaml.safe_load(text)
        node = yaml.compose(text)
    except yaml.YAMLError as exc:
        raise RuleBaseError(f"{source}: not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise RuleBaseError(f"{source}: a rule base must be a mapping")
    unknown = set(data) - _TOP_KEYS
    if unknown:
        raise RuleBaseError(f"{source}: unknown top-level keys {sorted(unknown)}")
    for key in ("id", "verdicts", "rules"):
        if key not in data:
            raise RuleBaseError(f"{source}: missing required key {key!r}")
    if data.get("schema", schema.name) != schema.name:
        raise RuleBaseError(f"{source}: written for schema {data['schema']!r}, not {schema.name!r}")

    verdicts = data["verdicts"]
    if not isinstance(verdicts, dict) or not verdicts:
        raise RuleBaseError(f"{source}: 'verdicts' must map verdict names to integer ranks")
    for name, rank in verdicts.items():
        if not isinstance(rank, int) or isinstance(rank, bool):
            raise RuleBaseError(f"{source}: verdict {name!r}: rank must be an integer, got {rank!r}")

    attr_names = set(schema.names())
    pred_lines = _mapping_lines(node, "predicates")
    raw_preds = data.get("predicates") or {}
    if not isinstance(raw_preds, dict):
        raise RuleBaseError(f"{source}: 'predicates' must map names to conditions")
    predicates: dict[str, Expr] = {}
    for name, cond in raw_preds.items():
        where = f"{source}: predicate {name!r} (line {pred_lines.get(name, 0)})"
        if name in attr_names:
            raise RuleBaseError(f"{where}: shadows an attribute of the schema")
        try:
            predicates[name] = parse_expr(cond)
        except ExprError as exc:
            raise RuleBaseError(f"{where}: {exc}") from exc
    for name, expr in predicates.items():
        where = f"{source}: predicate {name!r} (line {pred_lines.get(name, 0)})"
        try:
            check_expr(expr, schema, predicates, raw_preds[name])
        except ExprError as exc:
            raise RuleBaseError(f"{where}: {exc}") from exc
        _check_acyclic(name, predicates, where)

    raw_rules = data["rules"]
    if not isinstance(raw_rules, list) or not raw_rules:
        raise RuleBaseError(f"{source}: 'rules' must be a non-empty list")
    rule_lines = _mapping_lines(node, "rules")
    rules: list[Rule] = []
    seen: dict[str, int] = {}
    for i, raw in enumerate(raw_rules):
        line = rule_lines.get(i, 0)
        if not isinstance(raw, dict):
            raise RuleBaseError(f"{source}: rule #{i + 1} (line {line}): must be a mapping")
        rid = raw.get("id")
        where = f"{source}: rule {rid!r} (line {line})"
        if not isinstance(rid, str) or not rid:
            raise RuleBaseError(f"{source}: rule #{i + 1} (line {line}): missing 'id'")
        if set(raw) - _RULE_KEYS:
            raise RuleBaseError(f"{where}: unknown keys {sorted(set(raw) - _RULE_KEYS)}")
        if rid in seen:
            raise RuleBaseError(f"{where}: duplicate rule id (first defined on line {seen[rid]})")
        seen[rid] = line
        if raw.get("verdict") not in verdicts:
            raise RuleBaseError(f"{where}: verdict {raw.get('verdict')!r} is not in the verdict ranking")
        try:
            when = parse_expr(raw.get("when"))
            check_expr(when, schema, predicates, raw["when"])
        except ExprError as exc:
            raise RuleBaseError(f"{where}: {exc}") from exc
        rules.append(Rule(rid, when, raw["verdict"], bool(raw.get("reconstructed", False)), line))
    return RuleBase(str(data["id"]), schema, predicates, dict(verdicts), tuple(rules), source)


def _check_acyclic(start: str, predicates: dict[str, Expr], where: str) -> None:
    stack, seen = [start], set()
    while stack:
        name = stack.pop()
        for ref in names_in(predicates[name]) & predicates.keys():
            if ref == start:
                raise RuleBaseError(f"{where}: predicate refers to itself through {name!r}")
            if ref not in seen:
                seen.add(ref)
                stack.append(ref)


def load_rulebase(path: str | Path, schema: AttributeSchema | None = None) -> RuleBase:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"rule base file not found: {path}")
    return parse_rulebase(path.read_text(), str(path), schema)


@cache
def default_rulebase() -> RuleBase:
    text = resources.files("spl_hf.data").joinpath("rulebase_default.yaml").read_text()
    return parse_rulebase(text, "spl_hf/data/rulebase_default.yaml")
