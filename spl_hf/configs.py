"""Loading config dataclasses from YAML recipes with ``HfArgumentParser`` (unknown keys fail)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TypeVar

from transformers import HfArgumentParser

T = TypeVar("T")


def load_config(cls: type[T], path: str | None = None, overrides: Mapping[str, object] | None = None) -> T:
    """Build ``cls`` from an optional YAML recipe, then apply command-line overrides."""
    if path:
        (cfg,) = HfArgumentParser(cls).parse_yaml_file(path, allow_extra_keys=False)
    else:
        cfg = cls()
    return dataclasses.replace(cfg, **dict(overrides or {}))  # type: ignore[type-var]
