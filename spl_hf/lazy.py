"""Lazy re-exports for packages whose modules import heavy libraries (pyarrow, datasets, torch).

A package lists its public names as ordinary ``from spl_hf.pkg.mod import Name`` lines under
``if TYPE_CHECKING:`` (so type checkers and readers see them) and ends with::

    __getattr__, __dir__ = lazy_exports(__name__, __file__)

Importing the package then runs none of those modules; ``pkg.Name`` imports ``pkg.mod`` on first
use. This is what lets ``spl-hf --help`` import a light submodule (e.g. ``spl_hf.assign.config``)
without the package's heavy siblings: Python runs a package's ``__init__`` before any submodule.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _type_checking_imports(init_file: str) -> dict[str, str]:
    """name -> module of the ``from X import name`` lines under the file's ``if TYPE_CHECKING:``."""
    tree = ast.parse(Path(init_file).read_text(encoding="utf-8"))
    out: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom) and stmt.module:
                    for alias in stmt.names:
                        out[alias.asname or alias.name] = stmt.module
    return out


def lazy_exports(package: str, init_file: str) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` resolving the package's re-exports on first use."""
    exports = _type_checking_imports(init_file)
    namespace = importlib.import_module(package).__dict__

    def __getattr__(name: str) -> Any:
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(exports[name]), name)
        namespace[name] = value  # later lookups are plain attribute reads
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *exports})

    return __getattr__, __dir__
