"""The runtime import graph of spl_hf and the hub server, function-level imports included.

Every ``import``/``from ... import`` statement counts wherever it sits (module level or inside a
function), except those under ``if TYPE_CHECKING:``, which never run. A name imported from a lazy
face (a package ``__init__`` with an ``_EXPORTS`` table) is an edge to the module that defines it,
since that is what the attribute access imports; a name that is a submodule is an edge to it.
Importing ``a.b.c`` first runs the ``__init__`` of ``a`` and ``a.b``: those are edges too.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TREES = (ROOT, ROOT / "hub-server")  # folders holding a top-level package each
PACKAGES = ("spl_hf", "spl_hf_hub_server")


def modules() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the two distributions."""
    out = {}
    for tree, package in zip(TREES, PACKAGES, strict=True):
        for path in sorted((tree / package).rglob("*.py")):
            parts = path.relative_to(tree).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """ids of the import nodes under ``if TYPE_CHECKING:`` (they never run)."""
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                skip |= {id(n) for n in ast.walk(inner)}
    return skip


def _exports(tree: ast.AST) -> dict[str, str]:
    """A lazy face's name -> defining module, from its ``_EXPORTS`` table."""
    for node in tree.body:  # type: ignore[attr-defined]
        target = node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
        if isinstance(target, ast.Name) and target.id == "_EXPORTS" and node.value is not None:
            table = ast.literal_eval(node.value)
            return {name: module for module, names in table.items() for name in names}
    return {}


def _imports(
    name: str, path: Path, tree: ast.AST, typing: bool = False
) -> Iterator[tuple[str, list[str], int]]:
    """(imported module, names imported from it, line) for every import that runs (``typing``: and
    every import under ``if TYPE_CHECKING:`` too, but a face's list of its names for readers)."""
    skip = set() if typing and path.name != "__init__.py" else _type_checking_nodes(tree)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, [], node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            yield base, [a.name for a in node.names], node.lineno


def graph(typing: bool = False) -> dict[str, dict[str, int]]:
    """module -> {imported module: line of the first such import}, over the project's own modules;
    ``typing``: type-checking imports count too (what a type checker or a reader follows)."""
    files = modules()
    trees = {name: ast.parse(path.read_text(encoding="utf-8")) for name, path in files.items()}
    faces = {name: _exports(tree) for name, tree in trees.items() if files[name].name == "__init__.py"}
    edges: dict[str, dict[str, int]] = {name: {} for name in files}
    for name, tree in trees.items():
        for target, names, line in _imports(name, files[name], tree, typing):
            if target.split(".")[0] not in PACKAGES:
                continue
            hits = [f"{target}.{n}" for n in names if f"{target}.{n}" in files]
            hits += [faces[target][n] for n in names if n in faces.get(target, {})]
            if not names or len(hits) < len(names):
                hits.append(target)  # the module itself (or a face's eager part)
            parts = target.split(".")
            # the parent packages' __init__ run first, unless the importer is inside them (then
            # that __init__ is already running or done)
            hits += [
                parent
                for parent in (".".join(parts[:i]) for i in range(1, len(parts)))
                if not (name == parent or name.startswith(parent + "."))
            ]
            for hit in hits:
                if hit in files and hit != name:
                    edges[name].setdefault(hit, line)
    return edges


def cycles(edges: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    import sys

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        for v in sorted(edges):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    return sorted(out)


def folder(module: str) -> str:
    """The top-level package (``spl_hf.audit``) or root module (``spl_hf.files``) a module is in."""
    return ".".join(module.split(".")[:2])


def folder_graph(edges: dict[str, dict[str, int]]) -> dict[str, dict[str, str]]:
    """folder -> {imported folder: 'module:line' of one import making the edge}."""
    out: dict[str, dict[str, str]] = {}
    for src, targets in edges.items():
        for dst, line in targets.items():
            a, b = folder(src), folder(dst)
            out.setdefault(a, {})
            if a != b:
                out[a].setdefault(b, f"{src}:{line}")
    return out
