"""The condition language of rule bases: a small boolean language parsed here, never ``eval``-ed.

Grammar (keywords are lower case)::

    expr     := and_expr ("or" and_expr)*
    and_expr := not_expr ("and" not_expr)*
    not_expr := "not" not_expr | atom
    atom     := "(" expr ")" | NAME "==" VALUE | NAME "!=" VALUE
              | NAME "in" "{" VALUE ("," VALUE)* "}" | NAME
    VALUE    := NAME | "true" | "false"

A bare NAME is a boolean attribute or a predicate; which one is resolved against the
schema when a rule base is loaded. Parsing only builds an immutable tree of the node
classes below, so nothing in a condition can reach Python.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Union

from spl_hf.errors import SplHfError

MAX_DEPTH = 64
MAX_LENGTH = 10_000
KEYWORDS = frozenset({"and", "or", "not", "in"})
_TOKEN = re.compile(r"\s*(?:(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<op>==|!=|[(){},]))")


class ExprError(SplHfError):
    """A malformed condition; ``pos`` is the 0-based character offset of the problem."""

    def __init__(self, message: str, pos: int, text: str = "") -> None:
        self.message, self.pos, self.text = message, pos, text
        super().__init__(f"col {pos + 1}: {message}")


@dataclass(frozen=True)
class Ref:
    name: str


@dataclass(frozen=True)
class Eq:
    name: str
    value: str
    negate: bool = False


@dataclass(frozen=True)
class In:
    name: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class Not:
    item: Expr


@dataclass(frozen=True)
class And:
    items: tuple[Expr, ...]


@dataclass(frozen=True)
class Or:
    items: tuple[Expr, ...]


Expr = Union[Ref, Eq, In, Not, And, Or]  # noqa: UP007 -- runtime alias used in isinstance-free code


@dataclass(frozen=True)
class _Tok:
    kind: str  # "name", "op" or "end"
    text: str
    pos: int


def _tokenize(text: str) -> list[_Tok]:
    if len(text) > MAX_LENGTH:
        raise ExprError(f"condition longer than {MAX_LENGTH} characters", MAX_LENGTH, text)
    toks: list[_Tok] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if not m:
            bad = pos + len(text[pos:]) - len(text[pos:].lstrip())
            raise ExprError(f"unexpected character {text[bad]!r}", bad, text)
        kind = "name" if m.group("name") else "op"
        start = m.start(kind)
        toks.append(_Tok(kind, m.group(kind), start))
        pos = m.end()
    toks.append(_Tok("end", "", len(text)))
    return toks


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _tokenize(text)
        self.i = 0
        self.depth = 0

    def peek(self) -> _Tok:
        return self.toks[self.i]

    def take(self) -> _Tok:
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def fail(self, message: str, tok: _Tok | None = None) -> ExprError:
        tok = tok or self.peek()
        return ExprError(message, tok.pos, self.text)

    def expect_op(self, op: str) -> _Tok:
        tok = self.take()
        if tok.kind != "op" or tok.text != op:
            raise self.fail(f"expected {op!r}, found {tok.text or 'end of condition'!r}", tok)
        return tok

    def is_kw(self, word: str) -> bool:
        tok = self.peek()
        return tok.kind == "name" and tok.text == word

    def parse(self) -> Expr:
        if self.peek().kind == "end":
            raise self.fail("empty condition")
        node = self.expr()
        if self.peek().kind != "end":
            raise self.fail(f"unexpected {self.peek().text!r}")
        return node

    def nest(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.fail(f"condition nested deeper than {MAX_DEPTH} levels")

    def expr(self) -> Expr:
        items = [self.and_expr()]
        while self.is_kw("or"):
            self.take()
            items.append(self.and_expr())
        return items[0] if len(items) == 1 else Or(tuple(items))

    def and_expr(self) -> Expr:
        items = [self.not_expr()]
        while self.is_kw("and"):
            self.take()
            items.append(self.not_expr())
        return items[0] if len(items) == 1 else And(tuple(items))

    def not_expr(self) -> Expr:
        if self.is_kw("not"):
            self.take()
            self.nest()
            node = Not(self.not_expr())
            self.depth -= 1
            return node
        return self.atom()

    def name(self, what: str) -> _Tok:
        tok = self.take()
        if tok.kind != "name" or tok.text in KEYWORDS:
            raise self.fail(f"expected {what}, found {tok.text or 'end of condition'!r}", tok)
        return tok

    def atom(self) -> Expr:
        tok = self.peek()
        if tok.kind == "op" and tok.text == "(":
            self.take()
            self.nest()
            node = self.expr()
            self.depth -= 1
            self.expect_op(")")
            return node
        name = self.name("an attribute or predicate name").text
        nxt = self.peek()
        if nxt.kind == "op" and nxt.text in ("==", "!="):
            self.take()
            return Eq(name, self.name("a value").text, negate=nxt.text == "!=")
        if nxt.kind == "name" and nxt.text == "in":
            self.take()
            self.expect_op("{")
            values = [self.name("a value").text]
            while self.peek().kind == "op" and self.peek().text == ",":
                self.take()
                values.append(self.name("a value").text)
            self.expect_op("}")
            return In(name, tuple(values))
        return Ref(name)


def parse_expr(text: str) -> Expr:
    """Parse a condition; raises :class:`ExprError` with the offending position.

    >>> to_source(parse_expr("topic in {benign, borderline} and  not (refusal or operational)"))
    'topic in {benign, borderline} and not (refusal or operational)'
    >>> parse_expr("topic == ")
    Traceback (most recent call last):
    ...
    spl_hf.rules.expr.ExprError: col 10: expected a value, found 'end of condition'
    """
    if not isinstance(text, str):
        raise ExprError(f"condition must be a string, got {type(text).__name__}", 0)
    return _Parser(text).parse()


def to_source(node: Expr) -> str:
    """Canonical text of a tree; ``parse_expr(to_source(t)) == t`` for every parsed ``t``.

    >>> tree = parse_expr("not(sensitive)and topic!=benign")
    >>> to_source(tree), parse_expr(to_source(tree)) == tree
    ('not sensitive and topic != benign', True)
    """
    if isinstance(node, Ref):
        return node.name
    if isinstance(node, Eq):
        return f"{node.name} {'!=' if node.negate else '=='} {node.value}"
    if isinstance(node, In):
        return f"{node.name} in {{{', '.join(node.values)}}}"
    if isinstance(node, Not):
        inner = node.item
        text = to_source(inner)
        return f"not {text}" if isinstance(inner, (Ref, Eq, In, Not)) else f"not ({text})"
    if isinstance(node, And):
        return " and ".join(
            f"({to_source(i)})" if isinstance(i, (Or, And)) else to_source(i) for i in node.items
        )
    if isinstance(node, Or):
        return " or ".join(f"({to_source(i)})" if isinstance(i, Or) else to_source(i) for i in node.items)
    raise TypeError(f"not an expression node: {node!r}")


def names_in(node: Expr) -> set[str]:
    """Every attribute or predicate name the tree refers to.

    >>> sorted(names_in(parse_expr("topic == benign and (refusal or not risky)")))
    ['refusal', 'risky', 'topic']
    """
    if isinstance(node, (Ref, Eq, In)):
        return {node.name}
    if isinstance(node, Not):
        return names_in(node.item)
    return set().union(*(names_in(i) for i in node.items))
