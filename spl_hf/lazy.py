"""Lazy re-exports for packages whose modules import heavy libraries (pyarrow, datasets, torch).

A package lists its public names as ordinary ``from spl_hf.pkg.mod import Name`` lines under
``if TYPE_CHECKING:`` (so type checkers and readers see them), the same names in an explicit
table, and ends with::

    _EXPORTS = {"spl_hf.pkg.mod": ("Name",)}
    __getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)

``__all__`` is derived from the table (as TRL's ``_LazyModule`` derives it from its
``_import_structure``), plus ``eager`` names the face defines itself: each name is written twice,
once for readers and once for the table, and tests/test_lazy.py keeps the two equal.

Importing the package then runs none of those modules; ``pkg.Name`` imports ``pkg.mod`` on first
use. This is what lets ``spl-hf --help`` import a light submodule (e.g. ``spl_hf.assign.config``)
without the package's heavy siblings: Python runs a package's ``__init__`` before any submodule.
A module whose name would equal a re-exported name is private (``hub/_publish.py`` for
``hub.publish``), so importing a submodule never rebinds a face's name (tests/test_lazy.py).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, tuple[str, ...]], eager: tuple[str, ...] = ()
) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """``__getattr__`` and ``__dir__`` resolving the names of ``exports`` (module -> names) on first use,
    and the face's ``__all__``: those names and the ``eager`` ones it defines itself, sorted."""
    if isinstance(exports, str):  # the former signature took the package's __init__ file
        raise TypeError(
            f"{package}: lazy_exports takes the face's _EXPORTS table (module -> names), not a file"
        )
    where = {name: module for module, names in exports.items() for name in names}
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(where[name]), name)
        namespace[name] = value  # later lookups are plain attribute reads
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *where})

    return __getattr__, __dir__, sorted({*where, *eager})
