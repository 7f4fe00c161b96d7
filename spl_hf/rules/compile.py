"""Checking conditions against a schema, compiling them to a shared DAG and evaluating it.

Predicates make conditions share subexpressions: ``q2: q1 and (q1 or partial)`` refers to ``q1``
twice, and inlining such chains doubles the tree per level. Conditions are therefore compiled into
a *program*: a list of distinct nodes in topological order, each node identified by its canonical
form (kind, attribute/value, child node indices), so a predicate and any structurally equal
subexpression are one node however often they are referenced. Evaluating the program computes each
node exactly once, vectorised over encoded columns or per row, with no recursion: the cost is linear
in the number of distinct nodes, never in the size of the inlined tree.

Vectorised evaluation works on *encoded columns*: a bool array per boolean attribute and an int16
code array per category attribute (index into the schema's values; -1 = missing). The per-row
evaluator is the independent reference that tests and benchmarks compare the vectorised path against.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from spl_hf.errors import SplHfError
from spl_hf.rules.expr import And, Eq, Expr, ExprError, In, Not, Or, Ref, names_in
from spl_hf.schema import AttributeSchema

Columns = Mapping[str, np.ndarray]
_BOOL_VALUES = {"true": True, "false": False}

# Distinct nodes of one compiled rule base (sum of all conditions after sharing).
MAX_NODES = 1_000_000


def check_expr(node: Expr, schema: AttributeSchema, predicates: Mapping[str, object], text: str) -> None:
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


# ---------------------------------------------------------------- the compiled DAG
# Node kinds. Leaves: ("attr", name) a boolean attribute; ("eqb", name, bool) boolean == value;
# ("eq", name, code) category == value (code: index into its values); ("in", name, sorted codes).
# Inner: ("not", i), ("and", i, j, ...), ("or", i, j, ...) with child indices into the program.
Node = tuple


@dataclass(frozen=True)
class Program:
    """Distinct nodes in topological order (children before parents) and the node of each root."""

    nodes: tuple[Node, ...]
    roots: tuple[int, ...]

    @property
    def size(self) -> int:
        """Node evaluations per evaluation of every root: linear in the rule base, not the inlined trees."""
        return len(self.nodes)


class _Builder:
    """Hash-consing construction: structurally equal nodes get one index."""

    def __init__(self, schema: AttributeSchema, max_nodes: int | None = None) -> None:
        self.schema = schema
        self.attrs = {a.name: a for a in schema.attributes}
        self.nodes: list[Node] = []
        self.index: dict[Node, int] = {}
        self.max_nodes = MAX_NODES if max_nodes is None else max_nodes

    def intern(self, node: Node) -> int:
        i = self.index.get(node)
        if i is None:
            if len(self.nodes) >= self.max_nodes:
                raise SplHfError(f"conditions compile to more than {self.max_nodes} distinct nodes")
            i = self.index[node] = len(self.nodes)
            self.nodes.append(node)
        return i

    def code(self, name: str, value: str) -> int:
        return self.attrs[name].values.index(value)

    def add(self, expr: Expr, refs: Mapping[str, int]) -> int:
        """Node index of ``expr``; a ``Ref`` in ``refs`` is the already compiled predicate node.

        Recursion is bounded by the parser's nesting limit: predicates are never inlined here.
        """
        if isinstance(expr, Ref):
            if expr.name in refs:
                return refs[expr.name]
            return self.intern(("attr", expr.name))
        if isinstance(expr, Eq):
            if self.attrs[expr.name].kind == "bool":
                eq = self.intern(("eqb", expr.name, _BOOL_VALUES[expr.value]))
            else:
                eq = self.intern(("eq", expr.name, self.code(expr.name, expr.value)))
            return self.intern(("not", eq)) if expr.negate else eq
        if isinstance(expr, In):
            codes = tuple(sorted({self.code(expr.name, v) for v in expr.values}))
            return self.intern(("in", expr.name, codes))
        if isinstance(expr, Not):
            return self.intern(("not", self.add(expr.item, refs)))
        kids = tuple(self.add(i, refs) for i in expr.items)
        return self.intern(("and" if isinstance(expr, And) else "or", *kids))


def predicate_order(predicates: Mapping[str, Expr], refs_of: Mapping[str, set[str]]) -> list[str]:
    """Predicates with every predicate after the ones it refers to (iterative; cycles already rejected)."""
    order: list[str] = []
    state: dict[str, int] = {}  # 1 = on the stack, 2 = done
    for start in predicates:
        if state.get(start):
            continue
        stack = [(start, iter(sorted(refs_of[start])))]
        state[start] = 1
        while stack:
            name, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                stack.pop()
                state[name] = 2
                order.append(name)
            elif not state.get(nxt):
                state[nxt] = 1
                stack.append((nxt, iter(sorted(refs_of[nxt]))))
    return order


def compile_program(
    roots: Sequence[Expr],
    predicates: Mapping[str, Expr],
    schema: AttributeSchema,
    max_nodes: int | None = None,
) -> Program:
    """Compile checked conditions (and the predicates they use) into one shared program."""
    builder = _Builder(schema, max_nodes)
    refs_of = {n: names_in(e) & predicates.keys() for n, e in predicates.items()}
    compiled: dict[str, int] = {}
    for name in predicate_order(predicates, refs_of):
        compiled[name] = builder.add(predicates[name], compiled)
    root_ids = tuple(builder.add(r, compiled) for r in roots)
    # Only nodes reachable from a root are evaluated; unused predicates are compiled but dropped here.
    return _prune(builder.nodes, root_ids)


def _children(node: Node) -> tuple[int, ...]:
    kind = node[0]
    if kind == "not":
        return (node[1],)
    if kind in ("and", "or"):
        return node[1:]
    return ()


def _prune(nodes: list[Node], roots: tuple[int, ...]) -> Program:
    live = np.zeros(len(nodes), dtype=bool)
    live[list(roots)] = True
    for i in range(len(nodes) - 1, -1, -1):  # children always have smaller indices
        if live[i]:
            for c in _children(nodes[i]):
                live[c] = True
    new = np.cumsum(live) - 1
    kept: list[Node] = []
    for i in np.flatnonzero(live):
        node = nodes[i]
        kind = node[0]
        if kind == "not":
            node = ("not", int(new[node[1]]))
        elif kind in ("and", "or"):
            node = (kind, *(int(new[c]) for c in node[1:]))
        kept.append(node)
    return Program(tuple(kept), tuple(int(new[r]) for r in roots))


def _eval_node(node: Node, values: list, cols: Columns) -> np.ndarray:
    kind = node[0]
    if kind == "attr":
        return np.asarray(cols[node[1]], dtype=bool)
    if kind == "eqb":
        return np.asarray(cols[node[1]], dtype=bool) == node[2]
    if kind == "eq":
        return cols[node[1]] == node[2]
    if kind == "in":
        return np.isin(cols[node[1]], node[2])
    if kind == "not":
        return ~values[node[1]]
    parts = [values[c] for c in node[1:]]
    return np.logical_and.reduce(parts) if kind == "and" else np.logical_or.reduce(parts)


def run_program(program: Program, cols: Columns, on_root: Callable[[int, np.ndarray], None]) -> None:
    """Evaluate every node once, calling ``on_root(k, value)`` for root ``k`` as soon as it is known.

    A node's array is released after its last use, so memory follows the live set, not the program.
    """
    last_use = list(range(len(program.nodes)))
    for i, node in enumerate(program.nodes):
        for c in _children(node):
            last_use[c] = i
    roots_at: dict[int, list[int]] = {}
    for k, r in enumerate(program.roots):
        roots_at.setdefault(r, []).append(k)
    release: dict[int, list[int]] = {}
    for i, last in enumerate(last_use):
        release.setdefault(last, []).append(i)
    values: list = [None] * len(program.nodes)
    for i, node in enumerate(program.nodes):
        values[i] = _eval_node(node, values, cols)
        for k in roots_at.get(i, ()):
            on_root(k, values[i])
        for j in release.get(i, ()):
            values[j] = None


def evaluate(node: Expr, cols: Columns, schema: AttributeSchema, memo: dict | None = None) -> np.ndarray:
    """Vectorised truth value of an expanded condition (attributes only) over encoded columns.

    ``memo`` (canonical node -> array) shares sub-results between conditions evaluated on the same columns.
    """
    builder = _Builder(schema)
    root = builder.add(node, {})
    values: list = [None] * len(builder.nodes)
    for i, n in enumerate(builder.nodes):
        if memo is not None and n in memo:
            values[i] = memo[n]
            continue
        key = n if n[0] in ("attr", "eqb", "eq", "in") else None
        values[i] = _eval_node(n, values, cols)
        if memo is not None and key is not None:
            memo[key] = values[i]
    return values[root]


def row_runner(program: Program, schema: AttributeSchema) -> Callable[[Mapping[str, object]], list[bool]]:
    """Per-row evaluator of a program over a dict of decoded attribute values: one bool per root.

    It works on the schema's strings and bools (decoded values), so it shares no evaluation code
    with the vectorised path it is the reference for; each node is computed once per row.
    """
    nodes = program.nodes
    roots = program.roots
    codes = {
        a.name: {v: i for i, v in enumerate(a.values)} for a in schema.attributes if a.kind == "category"
    }

    def run(row: Mapping[str, object]) -> list[bool]:
        vals: list[bool] = []
        for node in nodes:
            kind = node[0]
            if kind == "attr":
                vals.append(bool(row[node[1]]))
            elif kind == "eqb":
                vals.append(bool(row[node[1]]) == node[2])
            elif kind == "eq":
                vals.append(codes[node[1]].get(row[node[1]], -1) == node[2])
            elif kind == "in":
                vals.append(codes[node[1]].get(row[node[1]], -1) in node[2])
            elif kind == "not":
                vals.append(not vals[node[1]])
            elif kind == "and":
                vals.append(all(vals[c] for c in node[1:]))
            else:
                vals.append(any(vals[c] for c in node[1:]))
        return [vals[r] for r in roots]

    return run


def row_evaluator(
    node: Expr, schema: AttributeSchema | None = None
) -> Callable[[Mapping[str, object]], bool]:
    """Per-row evaluator of one expanded condition over a dict of decoded attribute values."""
    from spl_hf.schema import default_schema

    schema = schema or default_schema()
    run = row_runner(compile_program([node], {}, schema), schema)
    return lambda row: run(row)[0]


def expand(node: Expr, predicates: Mapping[str, Expr]) -> Expr:
    """Inline predicate definitions (a tree for display/tests; evaluation uses :func:`compile_program`).

    >>> from spl_hf.rules.expr import parse_expr, to_source
    >>> to_source(expand(parse_expr("risky and refusal"), {"risky": parse_expr("sensitive and operational")}))
    '(sensitive and operational) and refusal'

    Inlined predicates are shared objects, so the result's memory is linear, but walking it as a tree
    is not: do not hash or traverse the result of deeply shared predicates.
    """
    cache: dict[str, Expr] = {}

    def go(n: Expr) -> Expr:
        if isinstance(n, Ref):
            if n.name not in predicates:
                return n
            if n.name not in cache:
                cache[n.name] = go(predicates[n.name])
            return cache[n.name]
        if isinstance(n, Not):
            return Not(go(n.item))
        if isinstance(n, And):
            return And(tuple(go(i) for i in n.items))
        if isinstance(n, Or):
            return Or(tuple(go(i) for i in n.items))
        return n

    return go(node)
