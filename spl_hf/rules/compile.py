"""Checking conditions against a schema and evaluating them, vectorised and per row.

Vectorised evaluation works on *encoded columns*: a bool array per boolean attribute and
an int16 code array per category attribute (index into the schema's values; -1 = missing).
The per-row evaluator exists as the independent reference that tests and benchmarks
compare the vectorised path against.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from spl_hf.rules.expr import And, Eq, Expr, ExprError, In, Not, Or, Ref
from spl_hf.schema import AttributeSchema

Columns = Mapping[str, np.ndarray]
_BOOL_VALUES = {"true": True, "false": False}


def check_expr(node: Expr, schema: AttributeSchema, predicates: Mapping[str, Expr], text: str) -> None:
    """Reject unknown attributes, unknown values and misuse of bool/category attributes."""
    known = {a.name: a for a in schema.attributes}
    pos = 0

    def fail(msg: str, name: str) -> ExprError:
        at = text.find(name)
        return ExprError(msg, at if at >= 0 else pos, text)

    def visit(n: Expr) -> None:
        if isinstance(n, Ref):
            if n.name in predicates:
                return
            attr = known.get(n.name)
            if attr is None:
                raise fail(f"unknown attribute or predicate {n.name!r}", n.name)
            if attr.kind != "bool":
                raise fail(f"category attribute {n.name!r} needs '==', '!=' or 'in'", n.name)
        elif isinstance(n, (Eq, In)):
            attr = known.get(n.name)
            if attr is None:
                what = "predicate" if n.name in predicates else "attribute"
                raise fail(f"unknown {what} {n.name!r} on the left of a comparison", n.name)
            values = (n.value,) if isinstance(n, Eq) else n.values
            allowed = tuple(_BOOL_VALUES) if attr.kind == "bool" else attr.values
            if isinstance(n, In) and attr.kind == "bool":
                raise fail(f"'in' needs a category attribute, {n.name!r} is boolean", n.name)
            for v in values:
                if v not in allowed:
                    raise fail(f"unknown value {v!r} for {n.name!r} (allowed: {', '.join(allowed)})", v)
            if isinstance(n, In) and len(set(values)) != len(values):
                raise fail(f"duplicate value in set for {n.name!r}", n.name)
        elif isinstance(n, Not):
            visit(n.item)
        else:
            for item in n.items:
                visit(item)

    visit(node)


def expand(node: Expr, predicates: Mapping[str, Expr]) -> Expr:
    """Inline predicate definitions, so evaluation sees attributes only."""
    if isinstance(node, Ref):
        return expand(predicates[node.name], predicates) if node.name in predicates else node
    if isinstance(node, Not):
        return Not(expand(node.item, predicates))
    if isinstance(node, And):
        return And(tuple(expand(i, predicates) for i in node.items))
    if isinstance(node, Or):
        return Or(tuple(expand(i, predicates) for i in node.items))
    return node


def evaluate(node: Expr, cols: Columns, schema: AttributeSchema, memo: dict | None = None) -> np.ndarray:
    """Vectorised truth value of an expanded condition over encoded columns.

    ``memo`` shares sub-results between conditions evaluated on the same columns: after predicate
    expansion, rules repeat the same subtrees (e.g. "sensitive"), which are then computed once.
    """
    if memo is not None and node in memo:
        return memo[node]
    if isinstance(node, Ref):
        out = np.asarray(cols[node.name], dtype=bool)
    elif isinstance(node, Eq):
        attr = schema.attribute(node.name)
        if attr.kind == "bool":
            hit = np.asarray(cols[node.name], dtype=bool) == _BOOL_VALUES[node.value]
        else:
            hit = cols[node.name] == attr.values.index(node.value)
        out = ~hit if node.negate else hit
    elif isinstance(node, In):
        attr = schema.attribute(node.name)
        out = np.isin(cols[node.name], [attr.values.index(v) for v in node.values])
    elif isinstance(node, Not):
        out = ~evaluate(node.item, cols, schema, memo)
    else:
        parts = [evaluate(i, cols, schema, memo) for i in node.items]
        out = np.logical_and.reduce(parts) if isinstance(node, And) else np.logical_or.reduce(parts)
    if memo is not None:
        memo[node] = out
    return out


def row_evaluator(node: Expr) -> Callable[[Mapping[str, object]], bool]:
    """Per-row evaluator over a plain dict of decoded attribute values (the reference path)."""
    if isinstance(node, Ref):
        name = node.name
        return lambda row: bool(row[name])
    if isinstance(node, Eq):
        name, negate = node.name, node.negate
        value: object = _BOOL_VALUES.get(node.value, node.value)
        return lambda row: (row[name] == value) != negate
    if isinstance(node, In):
        name, values = node.name, frozenset(node.values)
        return lambda row: row[name] in values
    if isinstance(node, Not):
        inner = row_evaluator(node.item)
        return lambda row: not inner(row)
    subs = [row_evaluator(i) for i in node.items]
    if isinstance(node, And):
        return lambda row: all(f(row) for f in subs)
    return lambda row: any(f(row) for f in subs)
