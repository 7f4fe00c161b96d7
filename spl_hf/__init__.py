"""spl_hf: auditable preference supervision on the Hugging Face stack."""

from __future__ import annotations

from typing import TYPE_CHECKING

from spl_hf.lazy import lazy_exports

if TYPE_CHECKING:
    from spl_hf.schema import Attribute, AttributeSchema, default_schema, load_schema


__version__ = "0.1.0"

# module -> the names this face re-exports from it (as imported under TYPE_CHECKING, for readers)
_EXPORTS: dict[str, tuple[str, ...]] = {
    "spl_hf.schema": (
        "Attribute",
        "AttributeSchema",
        "default_schema",
        "load_schema",
    ),
}

__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS, eager=("__version__",))
