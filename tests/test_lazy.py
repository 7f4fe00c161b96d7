"""Lazy package faces: names load on first use from an explicit table, and no face name is a module."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import sys
import types
from pathlib import Path

import pytest

import spl_hf
from tests import procs

PACKAGES = [
    *sorted(info.name for info in pkgutil.walk_packages(spl_hf.__path__, "spl_hf.") if info.ispkg),
    "spl_hf",
]
# Packages whose __init__ imports an optional library at once (evaluate): not faces of the core.
OPTIONAL = {"spl_hf.metrics"}


def _init_source(package: str) -> ast.Module:
    spec = importlib.util.find_spec(package)
    return ast.parse(Path(spec.origin).read_text(encoding="utf-8"))


def _all_names(package: str) -> list[str]:
    return list(getattr(importlib.import_module(package), "__all__", []))


@pytest.mark.parametrize("package", [p for p in PACKAGES if p not in OPTIONAL])
def test_no_exported_name_is_also_a_submodule(package):
    spec = importlib.util.find_spec(package)
    submodules = {info.name for info in pkgutil.iter_modules(spec.submodule_search_locations)}
    assert not submodules & set(_all_names(package))


def test_a_private_implementation_module_binds_the_module_and_the_face_the_function():
    code = (
        "import types; import spl_hf.hub._publish as p; import spl_hf.decontam._decontaminate as d; "
        "assert isinstance(p, types.ModuleType) and isinstance(d, types.ModuleType); "
        "from spl_hf.hub import publish; from spl_hf.decontam import decontaminate; "
        "assert publish is p.publish and decontaminate is d.decontaminate"
    )
    out = procs.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-1500:]


@pytest.mark.parametrize("package", [p for p in PACKAGES if p not in OPTIONAL])
def test_the_export_table_is_what_the_face_imports_for_readers_and_covers_all(package):
    module = importlib.import_module(package)
    table = getattr(module, "_EXPORTS", None)
    if table is None:
        return  # an eager package: nothing to resolve lazily
    typed: dict[str, tuple[str, ...]] = {}
    for node in _init_source(package).body:
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom):
                    typed[stmt.module] = typed.get(stmt.module, ()) + tuple(a.name for a in stmt.names)
    assert table == typed
    for name in _all_names(package):
        value = getattr(module, name)
        assert not isinstance(value, types.ModuleType), name


def test_reading_a_face_imports_only_what_is_asked():
    code = (
        "import sys, spl_hf.contract as c; assert 'spl_hf.contract.quality' not in sys.modules; "
        "c.position_counts; assert 'spl_hf.contract.quality' in sys.modules"
    )
    out = procs.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-1500:]


@pytest.mark.parametrize("package", [p for p in PACKAGES if p not in OPTIONAL])
def test_a_lazy_face_derives_all_from_its_export_table(package):
    """Each name is written twice (for readers, in the table), never a third time in ``__all__``."""
    module = importlib.import_module(package)
    table = getattr(module, "_EXPORTS", None)
    if table is None:
        return
    literal = [
        node
        for node in _init_source(package).body
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in node.targets)
    ]
    assert literal == [], "derive __all__: __getattr__, __dir__, __all__ = lazy_exports(...)"
    names = {n for names in table.values() for n in names}
    assert names <= set(module.__all__) and module.__all__ == sorted(module.__all__)
