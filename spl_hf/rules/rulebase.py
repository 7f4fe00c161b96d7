"""Rule bases: named predicates, rules (id, condition, verdict) and a fixed verdict ranking.

A rule base is data (YAML). Loading validates it completely against the attribute schema
and computes a content hash over its canonical form, which every derivation records.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, cached_property
from importlib import resources
from pathlib import Path

import yaml

from spl_hf.errors import SplHfError
from spl_hf.rules.compile import Program, check_expr, compile_program, expand
from spl_hf.rules.expr import KEYWORDS, Expr, ExprError, names_in, parse_expr, to_source
from spl_hf.schema import AttributeSchema, default_schema
from spl_hf.yamlio import MAX_DEPTH, YamlError, line_of, load_yaml_node

_TOP_KEYS = {"id", "schema", "predicates", "verdicts", "rules", "description"}
_RULE_KEYS = {"id", "when", "verdict", "reconstructed", "note"}

# Explicit limits: a rule base beyond them is refused at load with the limit named, instead of
# running out of stack, time or memory later (conditions: see spl_hf.rules.expr MAX_DEPTH/MAX_LENGTH,
# compiled size: spl_hf.rules.compile MAX_NODES).
MAX_TEXT = 16 * 2**20  # characters (bytes for a file)
MAX_YAML_DEPTH = MAX_DEPTH
MAX_RULES = 20_000
MAX_PREDICATES = 10_000
MAX_VERDICTS = 1_000
MAX_RANK = 1_000_000  # |rank|; ranks and their differences are stored as int32
MAX_NAME = 100
# Predicate and verdict names are identifiers of the condition language; "true"/"false" are values there.
RESERVED = KEYWORDS | {"true", "false"}
NAME = re.compile(rf"[A-Za-z_][A-Za-z0-9_]{{0,{MAX_NAME - 1}}}")
ID = re.compile(rf"[A-Za-z0-9_][A-Za-z0-9_.\-]{{0,{MAX_NAME - 1}}}")


class RuleBaseError(SplHfError):
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
                {
                    "id": r.id,
                    "when": to_source(r.when),
                    "verdict": r.verdict,
                    "reconstructed": r.reconstructed,
                }
                for r in self.rules
            ],
        }

    @cached_property
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

    @cached_property
    def program(self) -> Program:
        """Every rule's condition compiled into one DAG of distinct nodes (shared subexpressions once)."""
        return compile_program([r.when for r in self.rules], self.predicates, self.schema)

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


def _load_yaml(text: str, source: str) -> tuple[object, yaml.Node | None]:
    try:
        return load_yaml_node(text, source, max_chars=MAX_TEXT, max_depth=MAX_YAML_DEPTH)
    except YamlError as exc:
        raise RuleBaseError(str(exc)) from None


def _children_lines(node: yaml.Node | None, key: str) -> dict:
    """1-based line of each child (by position) under top-level ``key``.

    By position, not by key text: a key that YAML reads as a number or null has no name to look up.
    """
    if not isinstance(node, yaml.MappingNode):
        return {}
    for k, v in node.value:
        if k.value == key:
            if isinstance(v, yaml.MappingNode):
                return {i: line_of(kk) for i, (kk, _) in enumerate(v.value)}
            if isinstance(v, yaml.SequenceNode):
                return {i: line_of(item) for i, item in enumerate(v.value)}
    return {}


def _check_name(value: object, what: str, where: str) -> str:
    if not isinstance(value, str):
        kind = "null" if value is None else type(value).__name__
        raise RuleBaseError(
            f"{where}: {what} must be a name (a string), got {kind} {value!r}; quote it if YAML reads it "
            "as a number, boolean or null"
        )
    if not NAME.fullmatch(value) or value in RESERVED:
        raise RuleBaseError(
            f"{where}: {what} {value!r} is not a valid name (letters, digits and '_', not starting with a "
            f"digit, at most {MAX_NAME} characters, not one of {', '.join(sorted(RESERVED))})"
        )
    return value


def _check_id(value: object, what: str, where: str) -> str:
    if not isinstance(value, str) or not ID.fullmatch(value):
        hint = "" if isinstance(value, str) else "; quote it if YAML reads it as a number, boolean or null"
        raise RuleBaseError(
            f"{where}: {what} must be a non-empty string of letters, digits, '_', '.', '-' (at most "
            f"{MAX_NAME} characters), got {value!r}{hint}"
        )
    return value


def parse_rulebase(text: str, source: str = "<memory>", schema: AttributeSchema | None = None) -> RuleBase:
    schema = schema or default_schema()
    data, node = _load_yaml(text, source)
    rb_id = _check_top(data, source, schema)
    assert isinstance(data, dict)
    verdicts = _parse_verdicts(data["verdicts"], node, source)
    predicates = _parse_predicates(data.get("predicates") or {}, node, source, schema)
    rules = _parse_rules(data["rules"], node, source, schema, predicates, verdicts)
    rb = RuleBase(rb_id, schema, predicates, dict(verdicts), tuple(rules), source)
    try:
        rb.program  # noqa: B018 -- compile now, so size limits fail at load, naming the file
    except ValueError as exc:
        raise RuleBaseError(f"{source}: {exc}") from exc
    return rb


def _check_top(data: object, source: str, schema: AttributeSchema) -> str:
    """The top-level mapping: known keys, the required ones, the schema it was written for; its id."""
    if not isinstance(data, dict):
        raise RuleBaseError(f"{source}: a rule base must be a mapping")
    unknown = [k for k in data if k not in _TOP_KEYS]
    if unknown:
        raise RuleBaseError(f"{source}: unknown top-level keys {sorted(map(str, unknown))}")
    for key in ("id", "verdicts", "rules"):
        if key not in data:
            raise RuleBaseError(f"{source}: missing required key {key!r}")
    rb_id = _check_id(data["id"], "'id'", source)
    if not isinstance(data.get("schema", schema.name), str) or data.get("schema", schema.name) != schema.name:
        raise RuleBaseError(f"{source}: written for schema {data['schema']!r}, not {schema.name!r}")
    if not isinstance(data.get("description", ""), str):
        raise RuleBaseError(f"{source}: 'description' must be a string")
    return rb_id


def _parse_verdicts(verdicts: object, node: yaml.Node | None, source: str) -> dict[str, int]:
    """The verdict ranking: names to integer ranks within the limits."""
    verdict_lines = _children_lines(node, "verdicts")
    if not isinstance(verdicts, dict) or not verdicts:
        raise RuleBaseError(f"{source}: 'verdicts' must map verdict names to integer ranks")
    if len(verdicts) > MAX_VERDICTS:
        raise RuleBaseError(f"{source}: more than {MAX_VERDICTS} verdicts")
    for pos, (name, rank) in enumerate(verdicts.items()):
        where = f"{source}: verdict {name!r} (line {verdict_lines.get(pos, 0)})"
        _check_name(name, "a verdict", where)
        if not isinstance(rank, int) or isinstance(rank, bool):
            raise RuleBaseError(f"{where}: rank must be an integer, got {rank!r}")
        if abs(rank) > MAX_RANK:
            raise RuleBaseError(f"{where}: rank {rank} outside [-{MAX_RANK}, {MAX_RANK}]")
    return verdicts


def _parse_predicates(
    raw_preds: object, node: yaml.Node | None, source: str, schema: AttributeSchema
) -> dict[str, Expr]:
    """Named conditions: valid names not shadowing attributes, each parsed, checked and acyclic."""
    if not isinstance(raw_preds, dict):
        raise RuleBaseError(f"{source}: 'predicates' must map names to conditions")
    if len(raw_preds) > MAX_PREDICATES:
        raise RuleBaseError(f"{source}: more than {MAX_PREDICATES} predicates")
    attr_names = set(schema.names())
    by_pos = _children_lines(node, "predicates")
    pred_lines = {name: by_pos.get(pos, 0) for pos, name in enumerate(raw_preds)}
    predicates: dict[str, Expr] = {}
    for name, cond in raw_preds.items():
        where = f"{source}: predicate {name!r} (line {pred_lines[name]})"
        _check_name(name, "a predicate", where)
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
    _check_acyclic(predicates, lambda n: f"{source}: predicate {n!r} (line {pred_lines.get(n, 0)})")
    return predicates


def _parse_rules(
    raw_rules: object,
    node: yaml.Node | None,
    source: str,
    schema: AttributeSchema,
    predicates: dict[str, Expr],
    verdicts: dict[str, int],
) -> list[Rule]:
    """The rule list: within the limit, unique ids, each rule checked by :func:`_parse_rule`."""
    if not isinstance(raw_rules, list) or not raw_rules:
        raise RuleBaseError(f"{source}: 'rules' must be a non-empty list")
    if len(raw_rules) > MAX_RULES:
        raise RuleBaseError(f"{source}: {len(raw_rules)} rules, more than the limit of {MAX_RULES}")
    rule_lines = _children_lines(node, "rules")
    rules: list[Rule] = []
    seen: dict[str, int] = {}
    for i, raw in enumerate(raw_rules):
        rules.append(_parse_rule(raw, i, rule_lines.get(i, 0), source, schema, predicates, verdicts, seen))
    return rules


def _parse_rule(
    raw: object,
    i: int,
    line: int,
    source: str,
    schema: AttributeSchema,
    predicates: dict[str, Expr],
    verdicts: dict[str, int],
    seen: dict[str, int],
) -> Rule:
    """One rule: a mapping of known keys with a new id (recorded in `seen`), a ranked verdict and a
    checked condition."""
    if not isinstance(raw, dict):
        raise RuleBaseError(f"{source}: rule #{i + 1} (line {line}): must be a mapping")
    if "id" not in raw:
        raise RuleBaseError(f"{source}: rule #{i + 1} (line {line}): missing 'id'")
    rid = _check_id(raw["id"], "'id'", f"{source}: rule #{i + 1} (line {line})")
    where = f"{source}: rule {rid!r} (line {line})"
    extra = [k for k in raw if k not in _RULE_KEYS]
    if extra:
        raise RuleBaseError(f"{where}: unknown keys {sorted(map(str, extra))}")
    if rid in seen:
        raise RuleBaseError(f"{where}: duplicate rule id (first defined on line {seen[rid]})")
    seen[rid] = line
    verdict = raw.get("verdict")
    if not isinstance(verdict, str) or verdict not in verdicts:
        raise RuleBaseError(f"{where}: verdict {verdict!r} is not in the verdict ranking")
    reconstructed = raw.get("reconstructed", False)
    if not isinstance(reconstructed, bool):
        raise RuleBaseError(f"{where}: 'reconstructed' must be true or false, got {reconstructed!r}")
    if not isinstance(raw.get("note", ""), str):
        raise RuleBaseError(f"{where}: 'note' must be a string")
    try:
        when = parse_expr(raw.get("when"))
        check_expr(when, schema, predicates, raw["when"])
    except ExprError as exc:
        raise RuleBaseError(f"{where}: {exc}") from exc
    return Rule(rid, when, verdict, reconstructed, line)


def _check_acyclic(predicates: dict[str, Expr], where: Callable[[str], str]) -> None:
    """Reject predicates that refer to themselves, directly or through others (iterative DFS)."""
    refs_of = {n: sorted(names_in(e) & predicates.keys()) for n, e in predicates.items()}
    state: dict[str, int] = {}  # 1 = on the current path, 2 = finished
    for start in predicates:
        if state.get(start):
            continue
        state[start] = 1
        stack = [(start, iter(refs_of[start]))]
        while stack:
            name, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[name] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                path = [n for n, _ in stack]
                cycle = path[path.index(nxt) :]
                raise RuleBaseError(
                    f"{where(nxt)}: predicate refers to itself through {' -> '.join([*cycle, nxt])}"
                )
            elif not state.get(nxt):
                state[nxt] = 1
                stack.append((nxt, iter(refs_of[nxt])))


def load_rulebase(path: str | Path, schema: AttributeSchema | None = None) -> RuleBase:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"rule base file not found: {path}")
    if path.stat().st_size > MAX_TEXT:
        raise RuleBaseError(f"{path}: rule base larger than {MAX_TEXT} bytes")
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise RuleBaseError(f"{path}: not UTF-8 text (line {line}, byte {exc.start}): {exc.reason}") from exc
    return parse_rulebase(text, str(path), schema)


@cache
def default_rulebase() -> RuleBase:
    text = resources.files("spl_hf.data").joinpath("rulebase_default.yaml").read_text()
    return parse_rulebase(text, "spl_hf/data/rulebase_default.yaml")
