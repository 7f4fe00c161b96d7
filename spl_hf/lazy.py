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
import types
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


class _FaceModule(types.ModuleType):
    """A package whose re-exported names win over its submodules of the same name.

    Importing ``pkg.decontaminate`` makes the import system set the attribute ``decontaminate`` of
    ``pkg`` to the submodule; where the face re-exports a function of that name, that would turn
    ``from pkg import decontaminate`` into the module once anything imported the submodule first.
    """

    _face_exports: dict[str, str]

    def __setattr__(self, name: str, value: Any) -> None:
        exports = self.__dict__.get("_face_exports", {})
        if (
            name in exports
            and isinstance(value, types.ModuleType)
            and value.__name__ == f"{self.__name__}.{name}"
        ):
            return  # the submodule stays reachable through sys.modules and importlib
        super().__setattr__(name, value)


def lazy_exports(package: str, init_file: str) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` resolving the package's re-exports on first use."""
    exports = _type_checking_imports(init_file)
    module = importlib.import_module(package)
    namespace = module.__dict__
    namespace["_face_exports"] = exports
    module.__class__ = _FaceModule

    def __getattr__(name: str) -> Any:
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(exports[name]), name)
        namespace[name] = value  # later lookups are plain attribute reads
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *exports})

    return __getattr__, __dir__
